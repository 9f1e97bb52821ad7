"""How full entries and the world index share the per-turn budget (ADR 0013): a weak
meaning match is listed, not injected; the rank just below the full entries keeps room for its
index line; named entries keep DESIGN §2 rule 5 (never pushed out by entries ranked below)."""

from __future__ import annotations

from dataclasses import replace

from tests.lore_builders import TOKENIZER, book, entry, large_book, turn
from worldbook.core.selection import select
from worldbook.core.types import Decision, Selection, SelectionRules, SemanticHit, Turn, Via
from worldbook.runtime.matcher_cache import MatcherCache

RULES = SelectionRules()


def run(t: Turn, rules: SelectionRules = RULES) -> Selection:
    return select(t, rules, TOKENIZER, matcher_cache=MatcherCache())


def ids(items: object) -> list[str]:
    return [x.ref.entry_id for x in items]  # type: ignore[attr-defined]


def reason(sel: Selection, entry_id: str) -> tuple[Decision, str]:
    [rec] = [t for t in sel.trace if t.entry_id == entry_id]
    return rec.decision, rec.reason


def test_the_defaults_are_the_measured_ones() -> None:
    assert RULES.full_score_share == 0.65
    assert RULES.index_reserve_lines == 1
    assert RULES.index_gist_tokens_max == 24
    assert RULES.index_title_fallback is True


def test_a_weak_meaning_match_goes_to_the_index_instead_of_a_full_slot() -> None:
    big = large_book(n=100, tokens=100)
    hits = (
        SemanticHit("big", "big-0", 0.10),
        SemanticHit("big", "big-1", 0.07),  # 70% of the best: in full
        SemanticHit("big", "big-2", 0.06),  # 60%: listed only
        SemanticHit("big", "big-3", 0.065),  # exactly 65%: in full
    )
    sel = run(turn(big, hits=hits, window=100000))
    assert ids(sel.injected) == ["big-0", "big-1", "big-3"]
    assert ids(sel.index) == ["big-2"]
    decision, why = reason(sel, "big-2")
    assert decision is Decision.INDEXED
    assert "meaning score 0.060 under 65% of the best (0.100)" in why


def test_with_share_zero_every_ranked_entry_may_go_in_full() -> None:
    big = large_book(n=100, tokens=100)
    hits = (SemanticHit("big", "big-0", 0.10), SemanticHit("big", "big-2", 0.01))
    sel = run(turn(big, hits=hits, window=100000), replace(RULES, full_score_share=0.0))
    assert ids(sel.injected) == ["big-0", "big-2"]


def test_a_named_entry_is_never_held_back_by_its_meaning_score() -> None:
    big = large_book(n=100, tokens=100)
    hits = (SemanticHit("big", "big-0", 0.5), SemanticHit("big", "big-7", 0.01))
    sel = run(turn(big, user="What about Topic big-7?", hits=hits, window=100000))
    assert ids(sel.injected) == ["big-7", "big-0"]
    assert sel.injected[0].via is Via.LITERAL


def test_the_best_score_counts_named_entries_too() -> None:
    # A named entry that is also the best meaning match sets the bar for the others.
    big = large_book(n=100, tokens=100)
    hits = (SemanticHit("big", "big-7", 0.5), SemanticHit("big", "big-0", 0.2))
    sel = run(turn(big, user="What about Topic big-7?", hits=hits, window=100000))
    assert ids(sel.injected) == ["big-7"]
    assert "under 65% of the best (0.500)" in reason(sel, "big-0")[1]


def _tight_turn(entry_tokens: int = 100) -> Turn:
    # Canon 300 of the 800-token canon budget leaves 500 per turn: exactly five 100-token
    # entries, nothing for the index.
    canon = entry("c", tokens=300, canon=True)
    big = book("big", [canon, *large_book(n=60, tokens=entry_tokens).entries])
    hits = tuple(SemanticHit("big", f"big-{i}", 1.0 - i / 100) for i in range(10))
    return turn(big, hits=hits, window=8000)


def test_the_rank_below_the_full_entries_keeps_room_for_its_index_line() -> None:
    sel = run(_tight_turn())
    assert sel.per_turn_budget == 500
    assert ids(sel.injected) == [f"big-{i}" for i in range(4)]
    assert ids(sel.index)[0] == "big-4"
    decision, why = reason(sel, "big-4")
    assert decision is Decision.INDEXED and "kept for index lines" in why
    # Entries ranked below it do not jump into full ahead of it: they would eat its line.
    assert sel.index[0].ref.entry_id == "big-4"
    assert sel.per_turn_tokens <= sel.per_turn_budget


def test_without_a_reserve_full_entries_can_starve_the_index() -> None:
    sel = run(_tight_turn(), replace(RULES, index_reserve_lines=0))
    assert ids(sel.injected) == [f"big-{i}" for i in range(5)]
    assert ids(sel.index) == []
    assert "over budget: index line" in reason(sel, "big-5")[1]


def test_a_named_entry_may_use_the_room_kept_for_the_index() -> None:
    canon = entry("c", tokens=300, canon=True)
    big = book("big", [canon, *large_book(n=60, tokens=100).entries])
    hits = tuple(SemanticHit("big", f"big-{i}", 1.0 - i / 100) for i in range(10))
    user = "Topic big-0, Topic big-1, Topic big-2, Topic big-3, Topic big-4"
    sel = run(turn(big, user=user, hits=hits, window=8000))
    assert ids(sel.injected) == [f"big-{i}" for i in range(5)]
    assert all(e.via is Via.LITERAL for e in sel.injected)


def test_index_gists_are_cut_to_the_gist_cap() -> None:
    lore = "A very long first sentence " + " ".join(["word"] * 60) + ". Then more."
    long = entry("long", "Long One", lore=lore)
    big = book("big", [long, *large_book(n=60, tokens=100).entries])
    hits = (SemanticHit("big", "big-0", 1.0), SemanticHit("big", "long", 0.1))
    sel = run(turn(big, hits=hits, window=100000))
    [line] = [ln for ln in sel.index if ln.ref.entry_id == "long"]
    assert line.line.startswith("Long One — A very long first sentence")
    assert line.line.endswith("…")
    gist = line.line.split(" — ", 1)[1]
    assert TOKENIZER.count(gist.rstrip("…")) <= RULES.index_gist_tokens_max


def _nearly_spent() -> Turn:
    # Five 99-token entries leave 5 of the 500 per-turn tokens: too few for "Topic big-5 —
    # About it." (8 tokens), enough for the title "Topic big-5" (4).
    return _tight_turn(entry_tokens=99)


def test_a_line_whose_gist_does_not_fit_goes_as_its_title() -> None:
    rules = replace(RULES, index_reserve_lines=0)
    sel = run(_nearly_spent(), rules)
    assert len(sel.injected) == 5
    [line] = sel.index
    assert (line.ref.entry_id, line.line, line.tokens) == ("big-5", "Topic big-5", 4)
    assert "title only: its gist did not fit" in reason(sel, "big-5")[1]
    assert sel.per_turn_tokens <= sel.per_turn_budget
    off = run(_nearly_spent(), replace(rules, index_title_fallback=False))
    assert off.index == ()
    assert "over budget: index line 8 tokens, 5 left" in reason(off, "big-5")[1]
