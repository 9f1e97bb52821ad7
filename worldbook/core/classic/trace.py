"""Trace records and activations of a classic turn, built from the engine's outcomes.

Most entries of a large book are never looked at in a turn (no key of theirs was found): their
record ("no key matched in the last N messages", or "disabled") does not depend on the turn, so
it is built once per compiled book version and reused — a 2,000-entry trace costs a list copy.
"""

from __future__ import annotations

from typing import Any

from worldbook.core.classic.budget import Costed
from worldbook.core.classic.compiled import (
    DEFAULT_RECORDS,
    INHERITED_RECORDS,
    CompiledBook,
    EntrySpec,
)
from worldbook.core.classic.evaluate import Outcome
from worldbook.core.classic.result import Activation, Cause, Fate, TraceRecord, Via

_VIA: dict[Cause, Via] = {
    "constant": "constant",
    "decorator": "constant",
    "sticky": "constant",
    "kept": "constant",
    "keyword": "keyword",
    "min_activations": "keyword",
    "recursion": "recursion",
}


def _entry_fields(spec: EntrySpec, outcome: Outcome | None) -> dict[str, Any]:
    """What a trace record and an activation both say of their entry and of the pass that found
    it, under the same names (without an outcome, a record keeps its defaults for the pass)."""
    entry = spec.entry
    fields: dict[str, Any] = {
        "book_id": entry.book_id,
        "entry_id": entry.id,
        "title": entry.title,
        "priority": spec.priority,
        "order": spec.order,
    }
    if outcome is not None:
        fields.update(pass_no=outcome.pass_no, hits=outcome.hits)
    return fields


def _with_notes(reason: str, spec: EntrySpec) -> str:
    return f"{reason} [{'; '.join(spec.notes)}]" if spec.notes else reason


def record(
    spec: EntrySpec,
    fate: Fate,
    reason: str,
    outcome: Outcome | None = None,
    tokens: int | None = None,
) -> TraceRecord:
    return TraceRecord(
        **_entry_fields(spec, outcome),
        fate=fate,
        reason=_with_notes(reason, spec),
        tokens=tokens,
    )


def _default(spec: EntrySpec, recursive: bool) -> TraceRecord:
    if not spec.entry.enabled:
        return record(spec, "disabled", "disabled")
    if not spec.primary:
        return record(spec, "no_match", "no keys")
    depth = spec.depth
    where = f"the last {depth} messages" if depth != 1 else "the last message"
    if depth == 0:
        where = "no chat message (scan depth 0)"
    if recursive:
        where += " or recursed content"
    return record(spec, "no_match", f"no key matched in {where}")


def default_records(book: CompiledBook) -> tuple[TraceRecord, ...]:
    """The turn-independent record of every entry of ``book`` (built once per version; a
    version compiled from an earlier one takes the records of the specs it kept)."""
    cached = book.memo.get(DEFAULT_RECORDS)
    if cached is None:
        inherited = book.memo.get(INHERITED_RECORDS)
        specs, records = inherited if isinstance(inherited, tuple) else ((), ())
        if len(specs) == len(book.specs):  # an edit in place: kept specs keep their index
            made = [
                r if s is spec else _default(spec, book.recursive)
                for s, spec, r in zip(specs, book.specs, records, strict=True)
            ]
        else:  # a kept spec is the very same object (unless its index changed)
            before = {id(s): r for s, r in zip(specs, records, strict=True)}
            made = [before.get(id(s)) or _default(s, book.recursive) for s in book.specs]
        cached = book.memo[DEFAULT_RECORDS] = tuple(made)
        book.memo.pop(INHERITED_RECORDS, None)
    return cached  # type: ignore[return-value]


def activation(item: Costed, outcome: Outcome, character: str | None) -> Activation:
    spec = item.spec
    cause = outcome.cause or "keyword"
    return Activation(
        **_entry_fields(spec, outcome),
        text=spec.text,
        role=spec.role,
        via=_VIA[cause],
        cause=cause,
        tokens=item.tokens,
        reason=outcome.reason,
        character=character,
    )
