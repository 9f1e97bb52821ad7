"""The JSON shape of a selection, shared by ``worldbook select --json`` and the HTTP API.

Built as plain dicts (fast: a 2,000-entry book's trace is serialised every turn); the typed
model that documents it is ``worldbook.service.contract.SelectionOut``, and a test validates
this output against it.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from worldbook.core.rendering import RenderedPrompt
from worldbook.core.types import Decision, EntryRef, Selection, TraceRecord

JSONDict = dict[str, Any]
TraceLevel = Literal["full", "summary"]


def entry_json(ref: EntryRef) -> JSONDict:
    """``E``: the entry's id, book, title, full lore tokens, and the character it came with."""
    return {
        "entry_id": ref.entry_id,
        "book_id": ref.book_id,
        "title": ref.title,
        "tokens": ref.tokens,
        "character": ref.character,
    }


def _trace_json(record: TraceRecord) -> JSONDict:
    return {
        "entry_id": record.entry_id,
        "book_id": record.book_id,
        "title": record.title,
        "decision": record.decision.value,
        "reason": record.reason,
    }


def summarise_trace(trace: tuple[TraceRecord, ...]) -> list[TraceRecord]:
    """``trace=summary``: every record of what went in (canon, in full, index) and the
    book-level records, plus one count per book of the entries left out."""
    kept = [r for r in trace if r.decision is not Decision.LEFT_OUT or not r.entry_id]
    left: Counter[str] = Counter(
        r.book_id for r in trace if r.decision is Decision.LEFT_OUT and r.entry_id
    )
    titles = {r.book_id: r.title for r in trace if not r.entry_id}
    for book_id, count in left.items():
        reason = f"{count} entries left out (ask trace=full for each one's reason)"
        title = titles.get(book_id, "")
        kept.append(TraceRecord("", book_id, title, Decision.LEFT_OUT, reason))
    return kept


def selection_to_json(
    selection: Selection, rendered: RenderedPrompt, *, trace: TraceLevel = "full"
) -> JSONDict:
    """The selection and its rendering as one JSON-ready dict.

    ``tokens`` in ``E`` is the entry's full lore; ``cost`` is what the budget was charged
    (the cut text for a truncated entry, the line for an index line).
    """
    records = selection.trace if trace == "full" else summarise_trace(selection.trace)
    return {
        "canon": {
            "budget": selection.canon_budget,
            "tokens": selection.canon_tokens,
            "entries": [entry_json(e.ref) for e in selection.canon],
            "over_budget": [entry_json(ref) for ref in selection.canon_over_budget],
        },
        "whole_books": list(selection.whole_books),
        "per_turn_budget": selection.per_turn_budget,
        "per_turn_tokens": selection.per_turn_tokens,
        "lorebook": {"budget": selection.lorebook_budget, "tokens": selection.lorebook_tokens},
        "injected": [
            {
                **entry_json(e.ref),
                "via": e.via.value,
                "truncated": e.truncated,
                "cost": e.tokens,
                "role": e.role,
                "text": e.text,
            }
            for e in selection.injected
        ],
        "index": [
            {**entry_json(ln.ref), "line": ln.line, "linked": ln.linked, "cost": ln.tokens}
            for ln in selection.index
        ],
        "fallback_books": list(selection.fallback_books),
        "notes": list(selection.notes),
        "messages": rendered.openai_messages(),
        "tools": rendered.openai_tools(),
        "anthropic": rendered.anthropic(),
        "trace": [_trace_json(r) for r in records],
        "trace_level": trace,
    }
