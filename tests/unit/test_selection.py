"""The selection rules of DESIGN §2, one test (or a few) per rule and per budget-table row."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.lore_builders import TOKENIZER, book, entry, large_book, lore_of, turn
from worldbook.core.selection import canon_budget, select
from worldbook.core.types import (
    Decision,
    LoreBook,
    Message,
    ModelProfile,
    Selection,
    SelectionRules,
    SemanticHit,
    Turn,
    Via,
)
from worldbook.runtime.matcher_cache import MatcherCache

RULES = SelectionRules()


def run(t: Turn, rules: SelectionRules = RULES, cache: MatcherCache | None = None) -> Selection:
    return select(t, rules, TOKENIZER, matcher_cache=cache if cache is not None else MatcherCache())


def ids(items: object) -> list[str]:
    return [x.ref.entry_id for x in items]  # type: ignore[attr-defined]


def trace_of(sel: Selection, entry_id: str) -> tuple[Decision, str]:
    [rec] = [t for t in sel.trace if t.entry_id == entry_id]
    return rec.decision, rec.reason


def all_entry_ids(sel: Selection) -> set[str]:
    return {
        *ids(sel.canon),
        *(r.entry_id for r in sel.canon_over_budget),
        *ids(sel.injected),
        *ids(sel.index),
    }


# --- budget table: canon ---


@pytest.mark.parametrize(
    ("window", "expected"), [(8000, 800), (32000, 3200), (40000, 4000), (200000, 4000), (0, 0)]
)
def test_canon_budget_is_ten_percent_capped_at_4000(window: int, expected: int) -> None:
    assert canon_budget(window, RULES) == expected
    assert run(turn(book("b", [entry("c", canon=True)]), window=window)).canon_budget == expected


def test_canon_packs_book_by_book_in_list_order_and_stops_at_first_misfit() -> None:
    a = book("a", [entry("a1", tokens=300, canon=True), entry("a2", tokens=300, canon=True)])
    b = book("b", [entry("b1", tokens=300, canon=True), entry("b2", tokens=10, canon=True)])
    sel = run(turn(a, b, window=8000))  # canon budget 800
    assert ids(sel.canon) == ["a1", "a2"]
    assert [r.entry_id for r in sel.canon_over_budget] == ["b1", "b2"]
    assert sel.canon_tokens == 600
    decision, reason = trace_of(sel, "b2")
    assert decision is Decision.LEFT_OUT and "canon over budget" in reason
    assert any("over the 800-token canon budget" in n for n in sel.notes)


def test_first_canon_entry_always_kept_even_alone_over_budget() -> None:
    b = book("b", [entry("huge", tokens=2000, canon=True), entry("small", tokens=5, canon=True)])
    sel = run(turn(b, window=8000))
    assert ids(sel.canon) == ["huge"]
    assert sel.canon_tokens > sel.canon_budget
    assert [r.entry_id for r in sel.canon_over_budget] == ["small"]
    assert trace_of(sel, "huge")[0] is Decision.CANON
    assert sel.per_turn_budget == 0


def test_canon_cost_note_when_heavy_only() -> None:
    heavy = run(turn(book("b", [entry("c", tokens=500, canon=True)]), window=8000))
    assert any(
        n.startswith(f"Core canon: {heavy.canon_tokens} tokens every turn") for n in heavy.notes
    )
    light = run(turn(book("b", [entry("c", tokens=100, canon=True)]), window=8000))
    assert not any(n.startswith("Core canon") for n in light.notes)


# --- books ---


def test_duplicate_book_counted_once_and_traced() -> None:
    b = book("b", [entry("c", tokens=100, canon=True), entry("x", tokens=20)], character="Alice")
    dup = LoreBook(b.id, b.title, b.entries, character="Bob", version=b.version)
    sel = run(turn(b, dup))
    assert ids(sel.canon) == ["c"]
    assert ids(sel.injected) == ["x"]
    assert sel.canon_tokens == b.entries[0].tokens
    assert sel.injected[0].ref.character == "Alice"  # labelled by its first arrival
    dups = [t for t in sel.trace if "duplicate book" in t.reason]
    assert len(dups) == 1 and dups[0].book_id == "b" and dups[0].entry_id == ""


def test_disabled_entries_never_appear_anywhere() -> None:
    big = book(
        "big",
        [
            entry("c-off", "Canon Off", canon=True, enabled=False),
            entry("lit-off", "Mordor", enabled=False),
            entry("sem-off", "Hidden", enabled=False),
            entry("src", "Gondor", tokens=60, lore="Gondor is near Mordor and the Hidden vale."),
            *[entry(f"e{i}", tokens=100) for i in range(40)],
        ],
    )
    small = book("small", [entry("w-off", enabled=False), entry("w1", tokens=10)])
    hits = (SemanticHit("big", "sem-off", 0.99), SemanticHit("big", "e3", 0.5))
    sel = run(turn(big, small, user="Mordor and Gondor, Canon Off", hits=hits))
    disabled = {"c-off", "lit-off", "sem-off", "w-off"}
    assert not disabled & all_entry_ids(sel)
    assert not disabled & {t.entry_id for t in sel.trace}
    assert "src" in ids(sel.injected)


# --- whole book ---


def test_whole_book_goes_in_whole_in_list_order_without_matching() -> None:
    b = book(
        "b", [entry("c", tokens=100, canon=True), *[entry(f"w{i}", tokens=50) for i in range(5)]]
    )
    sel = run(turn(b, user="Topic w4 please", window=8000))
    assert sel.whole_books == ("b",)
    assert ids(sel.injected) == [f"w{i}" for i in range(5)]
    assert all(e.via is Via.WHOLE_BOOK for e in sel.injected)
    assert all(trace_of(sel, f"w{i}")[0] is Decision.INJECTED for i in range(5))
    assert any("Whole book" in n and "cacheable" in n for n in sel.notes)


def test_whole_books_consume_the_remainder_in_book_order() -> None:
    # canon budget 800, canon 100 → 700 left; a (400) fits, b (400) no longer, c (300) fits.
    a = book("a", [entry("c", tokens=100, canon=True), entry("a1", tokens=400)])
    b = book("b", [entry("b1", tokens=200), entry("b2", tokens=200)])
    c = book("c", [entry("c1", tokens=300)])
    sel = run(turn(a, b, c, window=8000))
    assert sel.canon_tokens == 100
    assert sel.whole_books == ("a", "c")
    assert ids(sel.injected) == ["a1", "c1"]
    assert sel.per_turn_budget == 0  # 800 - 100 - 400 - 300


def test_the_search_is_asked_once_for_the_large_books_only() -> None:
    # DESIGN §2 rule 5: meaning search only for books that will not travel whole, and only
    # those with an entry that has a vector; the core asks once per turn.
    a = book("a", [entry("c", tokens=100, canon=True), entry("a1", tokens=400)])
    b = book("b", [entry("b1", tokens=800), entry("b2", tokens=800)])
    c = book("c", [entry("c1", tokens=300)])
    d = book("d", [entry("d1", tokens=1300, indexed=False)])  # large, but nothing indexed
    asked: list[tuple[str, ...]] = []

    def search(book_ids: tuple[str, ...]) -> tuple[SemanticHit, ...]:
        asked.append(book_ids)
        return (SemanticHit("b", "b2", 0.9),)

    plain = turn(a, b, a, c, d, window=20000)
    sel = run(replace(plain, search=search))
    assert sel.whole_books == ("a", "c") and asked == [("b",)]  # d: large, nothing to search
    assert [e.ref.entry_id for e in sel.injected if e.via is Via.SEMANTIC] == ["b2"]
    asked.clear()
    run(replace(turn(a, c, window=20000), search=search))
    assert asked == []  # every book travels whole: nothing to search, nothing embedded


def test_whole_book_is_exactly_the_fit_boundary() -> None:
    b = book("b", [entry("w1", tokens=400), entry("w2", tokens=400)])
    total = sum(e.tokens for e in b.entries)
    fits = run(turn(b, window=total * 10))  # canon budget == total
    assert fits.whole_books == ("b",)
    assert fits.per_turn_budget == 0
    misses = run(turn(b, window=total * 10 - 10))
    assert misses.whole_books == ()


# --- per-turn budget ---


@pytest.mark.parametrize(
    ("window", "canon_tokens", "expected"),
    [(100000, 100, 2000), (8000, 100, 800 - 100), (8000, 800, 0), (30000, 1500, 1500)],
)
def test_per_turn_budget_is_min_of_cap_and_what_canon_left(
    window: int, canon_tokens: int, expected: int
) -> None:
    c = entry("c", tokens=canon_tokens, canon=True)
    b = book("big", [c, *large_book(n=100).entries])
    sel = run(turn(b, window=window))
    assert sel.per_turn_budget == min(2000, canon_budget(window, RULES) - c.tokens) == expected


def test_no_per_turn_budget_means_no_per_turn_lore_and_a_note() -> None:
    b = book("big", [entry("c", tokens=800, canon=True), *large_book(n=50).entries])
    sel = run(turn(b, user="Topic big-1", window=8000))
    assert sel.per_turn_budget == 0
    assert not sel.injected and not sel.index
    assert any("No per-turn lore budget" in n for n in sel.notes)
    assert "over budget" in trace_of(sel, "big-1")[1]


# --- literal hits ---


def test_literal_hits_from_user_message_and_last_two_replies_only() -> None:
    big = large_book(n=60)
    msgs = (
        Message("assistant", "Topic big-1"),  # third-last reply: not scanned
        Message("user", "Topic big-2"),  # not the last user message
        Message("assistant", "Topic big-3"),
        Message("assistant", "Topic big-4"),
        Message("user", "tell me of Topic big-5"),
    )
    sel = run(turn(big, messages=msgs, window=100000))
    literal = [e.ref.entry_id for e in sel.injected if e.via is Via.LITERAL]
    # The user's message first, then the replies, the newer reply first (ADR 0013).
    assert literal == ["big-5", "big-4", "big-3"]
    assert "last user message" in trace_of(sel, "big-5")[1]
    assert "reply" in trace_of(sel, "big-3")[1]


def test_names_over_the_reply_cap_keep_what_the_conversation_is_about() -> None:
    # ADR 0013: six names in one reply, four may go; the four with the best meaning
    # scores are kept, not the first four in book order.
    big = large_book(n=300, tokens=20)
    reply = " ".join(f"Topic big-{i}," for i in range(1, 7))
    scores = {1: 0.01, 2: 0.02, 3: 0.5, 4: 0.4, 5: 0.3, 6: 0.6}
    hits = tuple(SemanticHit("big", f"big-{i}", s) for i, s in scores.items())
    sel = run(turn(big, user="nothing named", replies=(reply,), hits=hits, window=100000))
    literal = [e.ref.entry_id for e in sel.injected if e.via is Via.LITERAL]
    assert literal == ["big-6", "big-3", "big-4", "big-5"]
    for capped in ("big-1", "big-2"):  # capped as names; too weak by meaning for a full slot
        assert trace_of(sel, capped)[0] is not Decision.INJECTED


def test_names_in_the_user_message_rank_by_meaning_then_book_order() -> None:
    big = large_book(n=300, tokens=20)
    user = "Topic big-1, Topic big-2, Topic big-3"
    hits = (SemanticHit("big", "big-3", 0.4), SemanticHit("big", "big-2", 0.2))
    sel = run(turn(big, user=user, hits=hits, window=100000))
    # scored names by score, the unscored one after them
    assert ids(sel.injected)[:3] == ["big-3", "big-2", "big-1"]


def test_a_name_scored_by_a_stale_vector_has_no_relevance() -> None:
    stale = entry("stale", "Stale One", tokens=20, indexed=False)
    big = book("big", [stale, *large_book(n=300, tokens=20).entries])
    hits = (SemanticHit("big", "stale", 0.9), SemanticHit("big", "big-5", 0.1))
    sel = run(turn(big, user="Stale One and Topic big-5", hits=hits, window=100000))
    assert ids(sel.injected)[:2] == ["big-5", "stale"]


def test_literal_caps_eight_total_four_from_replies_user_first() -> None:
    big = large_book(n=300, tokens=20)
    user = " ".join(f"Topic big-{i}," for i in range(6))
    replies = (" ".join(f"Topic big-{i}," for i in range(10, 16)), "Topic big-20")
    sel = run(turn(big, user=user, replies=replies, window=100000))
    ranked = [
        t
        for t in sel.trace
        if t.reason.startswith("literal") and "over the literal cap" not in t.reason
    ]
    from_user = [t for t in ranked if "user message" in t.reason]
    from_replies = [t for t in ranked if "reply" in t.reason]
    assert len(from_user) == 6 and len(from_replies) == 2
    capped = [t for t in sel.trace if "over the literal cap" in t.reason]
    assert len(capped) == 5


def test_replies_cap_holds_even_with_room_left() -> None:
    big = large_book(n=300, tokens=20)
    replies = ("x", " ".join(f"Topic big-{i}," for i in range(10)))
    sel = run(turn(big, user="nothing named", replies=replies, window=100000))
    literal = [t for t in sel.trace if t.reason.startswith("literal") and "cap" not in t.reason]
    assert len(literal) == 4


def test_group_chat_scans_only_the_books_character_replies() -> None:
    alice = large_book("alice", character="Alice")
    bob = large_book("bob", character="Bob")
    msgs = (
        Message("assistant", "Topic alice-1 and Topic bob-1", name="Bob"),
        Message("assistant", "Topic alice-2 and Topic bob-2", name="Alice"),
        Message("user", "hi"),
    )
    sel = run(turn(alice, bob, messages=msgs, window=100000))
    literal = {e.ref.entry_id for e in sel.injected if e.via is Via.LITERAL}
    assert literal == {"alice-2", "bob-1"}
    assert sel.group_chat and sel.characters == ("Alice", "Bob")
    assert {e.ref.character for e in sel.injected} == {"Alice", "Bob"}


# --- semantic hits ---


def test_semantic_after_literal_by_score_skipping_taken_and_unindexed() -> None:
    entries = large_book(n=40).entries
    stale = entry("stale", tokens=50, indexed=False)
    big = book("big", [*entries, stale])
    hits = (
        SemanticHit("big", "big-9", 0.5),
        SemanticHit("big", "big-1", 0.95),
        SemanticHit("big", "stale", 0.99),
        SemanticHit("big", "big-7", 0.9),
        SemanticHit("nowhere", "x", 1.0),
    )
    sel = run(turn(big, user="Topic big-9", hits=hits, window=100000))
    assert [(e.ref.entry_id, e.via) for e in sel.injected] == [
        ("big-9", Via.LITERAL),
        ("big-1", Via.SEMANTIC),
        ("big-7", Via.SEMANTIC),
    ]
    assert trace_of(sel, "stale") == (
        Decision.LEFT_OUT,
        "not indexed yet: its stored vector is not current, so it cannot rank by meaning",
    )


def test_semantic_ties_break_by_book_order_then_list_position() -> None:
    a, b = large_book("a"), large_book("b")
    hits = tuple(SemanticHit(bk, f"{bk}-{i}", 0.5) for bk, i in [("b", 1), ("a", 5), ("a", 2)])
    sel = run(turn(a, b, hits=hits, window=100000))
    assert ids(sel.injected) == ["a-2", "a-5", "b-1"]


# --- full entries and cuts ---


def test_at_most_five_in_full_rest_to_index() -> None:
    big = large_book(n=100, tokens=50)
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(20))
    sel = run(turn(big, hits=hits, window=100000))
    assert ids(sel.injected) == [f"big-{i}" for i in range(5)]
    assert ids(sel.index) == [f"big-{i}" for i in range(5, 17)]
    assert all("not relevant enough" in trace_of(sel, f"big-{i}")[1] for i in range(17, 20))


def test_long_entry_cut_to_800_at_a_sentence_boundary_and_flagged() -> None:
    sentences = " ".join(f"Sentence number {i} ends here." for i in range(300))
    long = entry("long", "Long One", lore=sentences)
    big = book("big", [long, *large_book(n=40).entries])
    sel = run(turn(big, user="Long One", window=100000))
    [injected] = [e for e in sel.injected if e.ref.entry_id == "long"]
    assert injected.truncated
    assert injected.tokens == TOKENIZER.count(injected.text) <= 800
    assert injected.text.endswith("ends here.")
    assert injected.ref.tokens == long.tokens > 800
    assert "cut to" in trace_of(sel, "long")[1]


def test_entry_that_does_not_fit_goes_to_index_and_next_is_tried() -> None:
    # Found by meaning (not named): an entry too big for what is left goes to the index and
    # the next candidate is tried.
    canon = entry("c", tokens=200, canon=True)  # canon budget 800 → 600 left per turn
    big = book("big", [canon, entry("fat", "Fat", tokens=700), *large_book(n=40).entries])
    hits = (SemanticHit("big", "fat", 0.9), SemanticHit("big", "big-3", 0.8))
    sel = run(turn(big, user="something else", hits=hits, window=8000))
    assert ids(sel.injected) == ["big-3"]
    assert ids(sel.index)[0] == "fat"
    decision, reason = trace_of(sel, "fat")
    assert decision is Decision.INDEXED and "tokens in full" in reason


def test_named_entry_is_cut_to_what_is_left_instead_of_falling_to_the_index() -> None:
    # DESIGN §2 rule 5, last point: "Read me the Long Chronicle, all of it."
    sentences = " ".join(f"Sentence number {i} ends here." for i in range(300))
    chronicle = entry("long", "Long Chronicle", lore=sentences)
    canon = entry("c", tokens=300, canon=True)  # canon budget 819 → 519 left per turn
    big = book("big", [canon, chronicle, *large_book(n=40).entries])
    hits = tuple(SemanticHit("big", f"big-{i}", 0.9 - i / 100) for i in range(10))
    sel = run(turn(big, user="Read me the Long Chronicle, all of it.", hits=hits, window=8192))
    assert ids(sel.injected)[0] == "long"
    [cut] = [e for e in sel.injected if e.ref.entry_id == "long"]
    assert cut.truncated and cut.tokens <= sel.per_turn_budget
    assert cut.tokens > 400  # it took (nearly) what was left, not a fixed small slice
    assert "cut to" in trace_of(sel, "long")[1]
    assert sel.per_turn_tokens <= sel.per_turn_budget


def test_named_entry_goes_to_the_index_when_under_150_tokens_are_left() -> None:
    rules = SelectionRules(named_cut_min_tokens=150)
    sentences = " ".join(f"Sentence number {i} ends here." for i in range(300))
    canon = entry("c", tokens=700, canon=True)  # 100 tokens left per turn
    big = book("big", [canon, entry("long", "Long Chronicle", lore=sentences)])
    big = book("big", [*big.entries, *large_book(n=40).entries])
    sel = run(turn(big, user="Long Chronicle please", window=8000), rules)
    assert "long" not in ids(sel.injected)
    assert trace_of(sel, "long")[0] in (Decision.INDEXED, Decision.LEFT_OUT)


# --- world index ---


def test_linked_entries_named_inside_injected_lore() -> None:
    src = entry("src", "Source", lore="Source borders Alpha, Beta and Gamma. " + "lore " * 20)
    named = [entry(n.lower(), n, tokens=30) for n in ("Alpha", "Beta", "Gamma")]
    big = book("big", [src, *named, *large_book(n=40).entries])
    sel = run(turn(big, user="Source", window=100000))
    linked = [ln for ln in sel.index if ln.linked]
    assert [ln.ref.entry_id for ln in linked] == ["alpha", "beta", "gamma"]
    assert linked[0].line == "Alpha — About it."
    assert "linked: named as 'Alpha' in 'Source'" in trace_of(sel, "alpha")[1]


def test_linked_cap_six() -> None:
    names = [f"Place{i}" for i in range(9)]
    src = entry("src", "Source", lore="Source touches " + ", ".join(names) + ". " + "x " * 10)
    big = book("big", [src, *[entry(n, n, tokens=30) for n in names], *large_book(n=40).entries])
    sel = run(turn(big, user="Source", window=100000))
    assert [ln.ref.entry_id for ln in sel.index if ln.linked] == names[:6]
    # scanning stops at the cap: the rest are counted in the book's summary record
    assert not [t for t in sel.trace if t.entry_id in names[6:]]


def test_index_lines_count_against_the_budget_and_nothing_exceeds_it() -> None:
    big = large_book(n=60, tokens=150)
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(30))
    # canon budget 800 → per-turn 800: 5 × 150 = 750 in full (entry tokens ≈ 150), lines cost ~8
    sel = run(turn(big, hits=hits, window=8000))
    used = sum(e.tokens for e in sel.injected) + sum(ln.tokens for ln in sel.index)
    assert used == sel.per_turn_tokens <= sel.per_turn_budget
    assert len(sel.injected) == 5
    assert 0 < len(sel.index) < 12
    assert any("over budget: index line" in t.reason for t in sel.trace)


# --- fallback ---


def test_fallback_to_list_order_when_not_mostly_indexed_and_no_match() -> None:
    big = book("big", [entry(f"big-{i}", tokens=50, indexed=i < 10) for i in range(100)])
    sel = run(turn(big, user="nothing named here", window=100000))
    assert sel.fallback_books == ("big",)
    assert ids(sel.injected) == [f"big-{i}" for i in range(5)]
    assert all(e.via is Via.ORDER for e in sel.injected)
    assert ids(sel.index) == [f"big-{i}" for i in range(5, 17)]
    assert any("indexed and nothing matched" in n for n in sel.notes)
    assert "fallback" in trace_of(sel, "big-0")[1]
    summary = [t for t in sel.trace if t.entry_id == "" and t.book_id == "big"]
    assert summary and "83 entries" in summary[0].reason


def test_no_fallback_when_a_literal_hit_exists_or_book_mostly_indexed() -> None:
    unindexed = book("big", [entry(f"big-{i}", tokens=50, indexed=False) for i in range(100)])
    named = run(turn(unindexed, user="Topic big-7", window=100000))
    assert named.fallback_books == ()
    assert ids(named.injected) == ["big-7"]
    indexed = large_book(n=100)
    quiet = run(turn(indexed, user="nothing", window=100000))
    assert quiet.fallback_books == () and not quiet.injected and not quiet.index
    [summary] = [t for t in quiet.trace if t.entry_id == ""]
    assert "100 entries: not relevant enough" in summary.reason


def test_unindexed_entries_are_traced_as_not_indexed_yet() -> None:
    big = book("big", [entry(f"big-{i}", tokens=50, indexed=i != 3) for i in range(100)])
    sel = run(turn(big, user="hello", window=100000))
    assert trace_of(sel, "big-3") == (
        Decision.LEFT_OUT,
        "not indexed yet: meaning search cannot find it until background indexing finishes",
    )


# --- determinism, trace, cache ---


def test_same_input_same_output_with_or_without_cache() -> None:
    big = large_book(n=80)
    hits = tuple(SemanticHit("big", f"big-{i}", 0.5) for i in (9, 3, 50, 3))
    t = turn(big, user="Topic big-70 and Topic big-2", hits=hits, window=20000)
    cache = MatcherCache()
    assert run(t, cache=cache) == run(t, cache=cache) == select(t, RULES, TOKENIZER)
    assert cache.builds == 1


def test_every_included_entry_has_a_matching_trace_record() -> None:
    big = book("big", [entry("c", tokens=50, canon=True), *large_book(n=60).entries])
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(25))
    sel = run(turn(big, user="Topic big-40", hits=hits, window=20000))
    decisions = {t.entry_id: t.decision for t in sel.trace}
    assert all(decisions[i] is Decision.CANON for i in ids(sel.canon))
    assert all(decisions[i] is Decision.INJECTED for i in ids(sel.injected))
    assert all(decisions[i] is Decision.INDEXED for i in ids(sel.index))
    entry_records = [t for t in sel.trace if t.entry_id]
    assert len(entry_records) == len({(t.book_id, t.entry_id) for t in entry_records})


def test_profile_tool_support_is_carried() -> None:
    sel = run(turn(large_book(), tools=True))
    assert sel.supports_tools
    assert isinstance(sel, Selection) and ModelProfile(10).supports_tools is False


def test_lore_builder_counts_are_exact() -> None:
    assert TOKENIZER.count(lore_of("x", 57)) == 57
