"""Invariants of the selection over random books, turns and rules (DESIGN §2)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lore_builders import TOKENIZER, books_once, lore_of
from worldbook.core.selection import canon_budget, select
from worldbook.core.types import (
    LoreBook,
    LoreEntry,
    Message,
    ModelProfile,
    Role,
    Selection,
    SelectionRules,
    SemanticHit,
    Turn,
    Via,
)
from worldbook.runtime.matcher_cache import MatcherCache

NAMES = ["Gondor", "Rohan", "Mordor", "Shire", "東京", "앨리스", "Ísland", "Minas Tirith", "feu"]
ROLES: list[Role] = ["user", "assistant", "system"]
FILLER = ["the", "and", "feuille", "東京駅", "앨리스가", "Rohan's", "hello", "."]


@st.composite
def entries(draw: st.DrawFn, book_id: str) -> tuple[LoreEntry, ...]:
    n = draw(st.integers(0, 15))
    out = []
    for i in range(n):
        tokens = draw(st.sampled_from([4, 10, 60, 150, 400, 900, 1500]))
        names = draw(st.lists(st.sampled_from(NAMES), max_size=2))
        lore = lore_of("", tokens)
        # Titles sometimes collide with other entries' aliases (shared names must not break
        # any invariant), sometimes are unique.
        title = draw(st.sampled_from([*NAMES, f"Entry {i}"]))
        if draw(st.booleans()):
            lore = " ".join(names) + ". " + lore  # lore naming other entries (links)
        out.append(
            LoreEntry(
                id=f"{book_id}-{i}",
                book_id=book_id,
                title=title,
                lore=lore,
                tokens=TOKENIZER.count(lore),
                aliases=tuple(names),
                canon=draw(st.booleans()) and draw(st.booleans()),
                enabled=draw(st.integers(0, 5)) > 0,
                indexed=draw(st.booleans()),
            )
        )
    return tuple(out)


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    books = []
    for _ in range(draw(st.integers(1, 4))):
        book_id = draw(st.sampled_from(["a", "b", "c"]))
        character = draw(st.sampled_from([None, "Alice", "Bob"]))
        books.append(LoreBook(book_id, f"Book {book_id}", draw(entries(book_id)), character, "v"))
    # One content per book id, so a duplicate id really is the same book (as the store gives).
    first = {b.id: b for b in reversed(books)}
    books = [LoreBook(b.id, b.title, first[b.id].entries, b.character, b.version) for b in books]
    words = st.lists(st.sampled_from(NAMES + FILLER), max_size=8).map(" ".join)
    messages = tuple(
        Message(role, text, draw(st.sampled_from([None, "Alice", "Bob"])))
        for role, text in draw(st.lists(st.tuples(st.sampled_from(ROLES), words), max_size=6))
    )
    all_ids = [(b.id, e.id) for b in books for e in b.entries] + [("zz", "ghost")]
    hits = tuple(
        SemanticHit(book_id, entry_id, draw(st.floats(0, 1)))
        for book_id, entry_id in draw(st.lists(st.sampled_from(all_ids), max_size=15))
    )
    window = draw(st.integers(0, 60000))
    tools = draw(st.booleans())
    return Turn(tuple(books), messages, ModelProfile(window, supports_tools=tools), hits)


rules_strategy = st.builds(
    SelectionRules,
    per_turn_cap=st.integers(0, 3000),
    full_entries_max=st.integers(0, 6),
    full_entry_tokens_max=st.integers(16, 900),
    index_topics_max=st.integers(0, 13),
    index_linked_max=st.integers(0, 7),
    literal_max=st.integers(0, 9),
    literal_from_replies_max=st.integers(0, 5),
    mostly_indexed_share=st.floats(0, 1),
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(t: Turn, rules: SelectionRules) -> Selection:
    return select(t, rules, TOKENIZER, matcher_cache=MatcherCache())


@SETTINGS
@given(turns(), rules_strategy)
def test_budgets_never_exceeded(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    assert sel.canon_budget == canon_budget(t.profile.input_window, rules)
    assert sel.canon_tokens == sum(e.tokens for e in sel.canon)
    if len(sel.canon) > 1:
        assert sel.canon_tokens <= sel.canon_budget
    whole = sum(e.tokens for e in sel.injected if e.via is Via.WHOLE_BOOK)
    assert sel.canon_tokens + whole <= max(sel.canon_budget, sel.canon_tokens)
    assert 0 <= sel.per_turn_budget <= rules.per_turn_cap
    assert sel.per_turn_budget <= max(0, sel.canon_budget - sel.canon_tokens - whole)
    per_turn = [e for e in sel.injected if e.via is not Via.WHOLE_BOOK]
    used = sum(e.tokens for e in per_turn) + sum(ln.tokens for ln in sel.index)
    assert used == sel.per_turn_tokens <= sel.per_turn_budget
    assert len(per_turn) <= rules.full_entries_max
    assert all(e.tokens <= rules.full_entry_tokens_max for e in per_turn)
    assert all(TOKENIZER.count(e.text) == e.tokens for e in per_turn)
    assert sum(not ln.linked for ln in sel.index) <= rules.index_topics_max
    assert sum(ln.linked for ln in sel.index) <= rules.index_linked_max


@SETTINGS
@given(turns(), rules_strategy)
def test_deterministic(t: Turn, rules: SelectionRules) -> None:
    shared = MatcherCache()
    first = select(t, rules, TOKENIZER, matcher_cache=shared)
    assert first == select(t, rules, TOKENIZER, matcher_cache=shared) == _run(t, rules)


@SETTINGS
@given(turns(), rules_strategy)
def test_disabled_never_present_and_nothing_twice(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    disabled = {(b.id, e.id) for b in t.books for e in b.entries if not e.enabled}
    shown = [
        *((e.ref.book_id, e.ref.entry_id) for e in (*sel.canon, *sel.injected)),
        *((r.book_id, r.entry_id) for r in sel.canon_over_budget),
        *((ln.ref.book_id, ln.ref.entry_id) for ln in sel.index),
    ]
    assert not disabled & set(shown)
    assert not disabled & {(r.book_id, r.entry_id) for r in sel.trace}
    assert len(shown) == len(set(shown))


@SETTINGS
@given(turns(), rules_strategy)
def test_whole_book_iff_it_fits(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    left = max(0, sel.canon_budget - sel.canon_tokens)
    expected = []
    for b in books_once(t.books):
        cost = sum(e.tokens for e in b.entries if e.enabled and not e.canon)
        if cost <= left:
            expected.append(b.id)
            left -= cost
    assert list(sel.whole_books) == expected
    whole_ids = [e.ref.entry_id for e in sel.injected if e.via is Via.WHOLE_BOOK]
    assert whole_ids == [
        e.id
        for b in books_once(t.books)
        if b.id in expected
        for e in b.entries
        if e.enabled and not e.canon
    ]


@SETTINGS
@given(turns(), rules_strategy)
def test_first_canon_entry_always_kept(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    canon = [(b.id, e.id) for b in books_once(t.books) for e in b.entries if e.enabled and e.canon]
    if canon:
        assert (sel.canon[0].ref.book_id, sel.canon[0].ref.entry_id) == canon[0]
        kept = [(e.ref.book_id, e.ref.entry_id) for e in sel.canon]
        over = [(r.book_id, r.entry_id) for r in sel.canon_over_budget]
        assert kept + over == canon  # a strict prefix, the rest over budget
    else:
        assert not sel.canon and not sel.canon_over_budget


@SETTINGS
@given(turns(), rules_strategy)
def test_literal_caps_hold(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    literal = [
        r for r in sel.trace if r.reason.startswith("literal:") and "literal cap" not in r.reason
    ]
    assert len(literal) <= rules.literal_max
    assert sum("reply" in r.reason for r in literal) <= rules.literal_from_replies_max
    by_key = {(r.book_id, r.entry_id) for r in literal}
    injected_literal = {
        (e.ref.book_id, e.ref.entry_id) for e in sel.injected if e.via is Via.LITERAL
    }
    assert injected_literal <= by_key


@SETTINGS
@given(turns(), rules_strategy)
def test_semantic_only_for_indexed_entries(t: Turn, rules: SelectionRules) -> None:
    sel = _run(t, rules)
    indexed = {(b.id, e.id) for b in t.books for e in b.entries if e.indexed}
    assert all(
        (e.ref.book_id, e.ref.entry_id) in indexed for e in sel.injected if e.via is Via.SEMANTIC
    )
