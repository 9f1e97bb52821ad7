"""Invariants of one turn through both engines (``worldbook.core.turn.select_lore``): the hybrid
merge rules of ``worldbook.core.lore_merge`` over random world, hybrid and classic books.

- no entry reaches the model twice, and a hybrid entry the world path sent in full is never
  activated by keyword (never charged twice);
- an entry the keyword pass brought in full is not also a world-index line, and its line's
  tokens left the per-turn tokens: per-turn tokens are exactly the world per-turn lore plus the
  index lines, within the per-turn budget; lorebook tokens are the activations', within the
  lorebook budget;
- render order: whole books, then the lorebook slot, then per-turn lore;
- every entry that went in has an "injected"/"canon" trace record, and disabled entries never
  go in by any path.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lore_builders import TOKENIZER, lore_of
from worldbook.core.classic import ClassicBook, ClassicEntry, ClassicSettings
from worldbook.core.turn import LoreTools, ResolvedTurn, select_lore
from worldbook.core.turn_request import BookSource, TurnRequest
from worldbook.core.types import (
    CLASSIC_VIAS,
    Decision,
    LoreBook,
    LoreEntry,
    Message,
    ModelProfile,
    SelectionRules,
    Via,
)
from worldbook.runtime.classic_cache import ClassicMatcherCache
from worldbook.runtime.matcher_cache import MatcherCache

NAMES = ["Gondor", "Rohan", "Mordor", "Shire", "東京", "앨리스"]


@st.composite
def shelf(draw: st.DrawFn, book_id: str, mode: str) -> tuple[LoreBook | None, ClassicBook | None]:
    world: list[LoreEntry] = []
    classic: list[ClassicEntry] = []
    for i in range(draw(st.integers(1, 12))):
        title = draw(st.sampled_from([*NAMES, f"Topic {book_id}{i}"]))
        lore = lore_of(title, draw(st.sampled_from([10, 60, 200, 600, 1200])))
        enabled = draw(st.integers(0, 6)) > 0
        keys = tuple(draw(st.lists(st.sampled_from(NAMES), max_size=2)))
        entry_id = f"{book_id}{i}"
        if mode != "classic":
            world.append(
                LoreEntry(
                    entry_id,
                    book_id,
                    title,
                    lore,
                    TOKENIZER.count(lore),
                    canon=draw(st.integers(0, 8)) == 0,
                    enabled=enabled,
                    indexed=draw(st.booleans()),
                )
            )
        if mode != "world" and (keys or mode == "classic"):
            classic.append(
                ClassicEntry(
                    entry_id,
                    book_id,
                    title,
                    lore,
                    position=i,
                    keys=keys,
                    selective=False,
                    constant=mode == "classic" and draw(st.integers(0, 5)) == 0,
                    enabled=enabled,
                    tokens=TOKENIZER.count(lore),
                )
            )
    budget = draw(st.sampled_from([100, 400, 2000]))
    lore_book = LoreBook(book_id, f"Book {book_id}", tuple(world), version="1") if world else None
    keyed = (
        ClassicBook(
            book_id, f"Book {book_id}", tuple(classic), ClassicSettings(token_budget=budget)
        )
        if mode != "world"
        else None
    )
    return lore_book, keyed


@st.composite
def turns(draw: st.DrawFn) -> ResolvedTurn:
    modes = draw(st.lists(st.sampled_from(["world", "hybrid", "classic"]), min_size=1, max_size=3))
    world: list[LoreBook] = []
    classic: list[ClassicBook] = []
    for i, mode in enumerate(modes):
        lore_book, keyed = draw(shelf(f"b{i}", mode))
        world += [lore_book] if lore_book else []
        classic += [keyed] if keyed else []
    words = draw(st.lists(st.sampled_from([*NAMES, "hello", "Topic b01"]), max_size=5))
    request = TurnRequest(
        "u",
        BookSource(book_ids=tuple(f"b{i}" for i in range(len(modes)))),
        ModelProfile(draw(st.sampled_from([1000, 4000, 8192, 40000])), TOKENIZER.id),
        (Message("user", " ".join(["Tell me of", *words])),),
    )
    hybrid = frozenset(f"b{i}" for i, m in enumerate(modes) if m == "hybrid")
    return ResolvedTurn(request, tuple(world), tuple(classic), hybrid)


def _tools() -> LoreTools:
    return LoreTools(
        SelectionRules(), TOKENIZER, TOKENIZER.count, MatcherCache(), ClassicMatcherCache()
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns())
def test_one_turn_through_both_engines_keeps_the_merge_rules(turn: ResolvedTurn) -> None:
    lore = select_lore(turn, _tools())
    sel = lore.selection
    went_in = [(e.ref.book_id, e.ref.entry_id) for e in (*sel.canon, *sel.injected)]
    assert all(n == 1 for n in Counter(went_in).values()), "an entry reached the model twice"

    disabled = {(e.book_id, e.id) for b in turn.world for e in b.entries if not e.enabled}
    disabled |= {(e.book_id, e.id) for b in turn.classic for e in b.entries if not e.enabled}
    listed = [(line.ref.book_id, line.ref.entry_id) for line in sel.index]
    assert not disabled & {*went_in, *listed}

    keyword = {(e.ref.book_id, e.ref.entry_id) for e in sel.injected if e.via in CLASSIC_VIAS}
    assert not keyword & set(listed), "a keyword entry is also an index line"

    world_per_turn = [
        e for e in sel.injected if e.via is not Via.WHOLE_BOOK and e.via not in CLASSIC_VIAS
    ]
    spent = sum(e.tokens for e in world_per_turn) + sum(line.tokens for line in sel.index)
    assert spent == sel.per_turn_tokens <= sel.per_turn_budget
    classic = [e for e in sel.injected if e.via in CLASSIC_VIAS]
    assert sum(e.tokens for e in classic) == sel.lorebook_tokens <= sel.lorebook_budget
    for e in (*sel.canon, *sel.injected):
        assert TOKENIZER.count(e.text) == e.tokens

    # Render order: whole books, then the lorebook slot, then per-turn lore.
    rank = [
        0 if e.via is Via.WHOLE_BOOK else 1 if e.via in CLASSIC_VIAS else 2 for e in sel.injected
    ]
    assert rank == sorted(rank)

    decided = {(r.book_id, r.entry_id): r.decision for r in sel.trace}
    for key in went_in:
        assert decided.get(key) in (Decision.INJECTED, Decision.CANON), key

    # A hybrid book that travelled whole takes no part in the keyword pass.
    for book_id in set(sel.whole_books) & turn.hybrid:
        assert not any(b == book_id for b, _ in keyword)
    if lore.classic is None:
        assert sel.lorebook_budget == 0 and not classic
