"""The classic pool's lore in the world selection's place (DESIGN §3; the hybrid rules of
``docs/design/classic-engine.md``).

- classic activations join ``Selection.injected`` in render order, between the stable world
  prefix (canon, whole books) and the per-turn world lore, with via constant | keyword |
  recursion, their role and exact text; they render into the one lorebook slot;
- the trace gets one record per classic entry (injected, or left out with its fate);
- hybrid books: an entry the world path already sent in full is skipped by the keyword pass
  (never charged twice: :func:`sent_in_full` is the pass's ``skip``); an entry the world path
  only listed in the world index and the keyword pass brings in full leaves the index, and its
  line's tokens leave the per-turn tokens; keyword activations are charged to the lorebook
  budget (the highest ``token_budget`` of the pool's books), never to the world budgets.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from worldbook.core.classic import ClassicResult
from worldbook.core.types import (
    Decision,
    EntryRef,
    IndexLine,
    InjectedEntry,
    LoreText,
    Selection,
    TraceRecord,
    Via,
)


def sent_in_full(selection: Selection, hybrid: Collection[str]) -> frozenset[tuple[str, str]]:
    """(book id, entry id) of the hybrid books' entries the world path put in the prompt."""
    in_full = (*selection.canon, *selection.injected)
    return frozenset((e.ref.book_id, e.ref.entry_id) for e in in_full if e.ref.book_id in hybrid)


def classic_injected(result: ClassicResult) -> list[InjectedEntry]:
    """The activations as selection entries, in render order."""
    return [
        InjectedEntry(
            EntryRef(a.entry_id, a.book_id, a.title, a.tokens, a.character),
            LoreText(a.text, a.tokens),
            Via(a.via),
            role=a.role,
        )
        for a in result.activations
    ]


def classic_trace(result: ClassicResult, hybrid: Collection[str]) -> list[TraceRecord]:
    """One record per classic entry; hybrid entries only when the keyword injected them (the
    world record says what happened to the others)."""
    out: list[TraceRecord] = []
    for r in result.trace:
        injected = r.fate == "injected"
        if r.book_id in hybrid and not injected:
            continue
        reason = r.reason if injected else f"{r.fate}: {r.reason}"
        decision = Decision.INJECTED if injected else Decision.LEFT_OUT
        out.append(TraceRecord(r.entry_id, r.book_id, r.title, decision, reason))
    return out


def merge(
    selection: Selection,
    result: ClassicResult,
    hybrid: Collection[str],
    characters: Sequence[str],
) -> Selection:
    """``selection`` with the classic lore in its place (see the module doc)."""
    lore = classic_injected(result)
    by_keyword = {(e.ref.book_id, e.ref.entry_id) for e in lore}
    stable = [e for e in selection.injected if e.via is Via.WHOLE_BOOK]
    per_turn = [e for e in selection.injected if e.via is not Via.WHOLE_BOOK]
    index: list[IndexLine] = []
    freed = 0
    for line in selection.index:
        if (line.ref.book_id, line.ref.entry_id) in by_keyword:
            freed += line.tokens
        else:
            index.append(line)
    world_trace = [
        r for r in selection.trace if (r.book_id, r.entry_id) not in by_keyword or not r.entry_id
    ]
    return replace(
        selection,
        injected=(*stable, *lore, *per_turn),
        index=tuple(index),
        per_turn_tokens=selection.per_turn_tokens - freed,
        trace=(*world_trace, *classic_trace(result, hybrid)),
        notes=(*selection.notes, *result.notes),
        characters=tuple(dict.fromkeys([*selection.characters, *characters])),
        lorebook_budget=result.budget,
        lorebook_tokens=result.used,
    )
