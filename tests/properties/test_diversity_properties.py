"""Diversified meaning hits through the selection (ADR 0021): re-scoring the hits by maximal
marginal relevance never changes canon or the literal tier, never breaks a budget, and with a
strength of 0 changes nothing."""

from __future__ import annotations

import zlib

from hypothesis import given
from hypothesis import strategies as st

from tests.properties.test_selection_properties import SETTINGS, _run, rules_strategy, turns
from worldbook.core.diversity import diversify
from worldbook.core.types import Decision, Selection, SelectionRules, SemanticHit, Turn, Via

Key = tuple[str, str]


def _diversified(t: Turn, strength: float, seed: int, kept: set[Key]) -> Turn:
    """The turn with its hits re-scored; similarities are arbitrary but symmetric."""

    def alike(a: Key, b: Key) -> float:
        if a == b:
            return 1.0
        low, high = sorted((a, b))
        return (zlib.crc32(repr((low, high, seed)).encode()) % 2001) / 1000 - 1.0

    lifts = {(h.book_id, h.entry_id): h.lift for h in reversed(t.semantic_hits)}
    pairs = list(dict.fromkeys((h.book_id, h.entry_id) for h in t.semantic_hits))
    first = {(h.book_id, h.entry_id): h.score for h in reversed(t.semantic_hits)}
    hits = [(k, first[k]) for k in sorted(pairs, key=lambda k: -first[k])]
    out = diversify(hits, alike, strength, kept)
    rescored = tuple(SemanticHit(b, e, s, lifts[b, e]) for (b, e), s in out)
    return Turn(t.books, t.messages, t.profile, rescored)


def _literal(sel: Selection) -> set[Key]:
    """Every entry the literal tier looked at (injected, indexed, cut or over its cap)."""
    return {(r.book_id, r.entry_id) for r in sel.trace if r.reason.startswith("literal:")}


def _shape(sel: Selection) -> tuple[object, ...]:
    return (
        [(e.ref.book_id, e.ref.entry_id, e.tokens) for e in sel.canon],
        [(e.ref.book_id, e.ref.entry_id, e.via, e.tokens) for e in sel.injected],
        [(ln.ref.book_id, ln.ref.entry_id, ln.tokens) for ln in sel.index],
    )


def _named(sel: Selection) -> dict[Key, tuple[Via, Decision]]:
    decisions = {(r.book_id, r.entry_id): r.decision for r in sel.trace}
    vias = {(e.ref.book_id, e.ref.entry_id): e.via for e in sel.injected}
    return {k: (vias.get(k, Via.LITERAL), decisions[k]) for k in _literal(sel)}


@SETTINGS
@given(turns(), rules_strategy, st.floats(0, 5), st.integers(0, 99))
def test_diversifying_keeps_canon_and_literals_and_budgets(
    t: Turn, rules: SelectionRules, strength: float, seed: int
) -> None:
    plain = _run(t, rules)
    # The service keeps the scores of every entry the conversation names (the literal tier).
    kept = _literal(plain)
    sel = _run(_diversified(t, strength, seed, kept), rules)
    assert _shape(sel)[0] == _shape(plain)[0]  # canon
    assert _named(sel) == _named(plain)  # the literal tier decides the same
    per_turn = [e for e in sel.injected if e.via is not Via.WHOLE_BOOK]
    used = sum(e.tokens for e in per_turn) + sum(ln.tokens for ln in sel.index)
    assert used == sel.per_turn_tokens <= sel.per_turn_budget == plain.per_turn_budget
    assert len(per_turn) <= rules.full_entries_max
    assert all(e.tokens <= rules.full_entry_tokens_max for e in per_turn)
    assert sum(not ln.linked for ln in sel.index) <= rules.index_topics_max


@SETTINGS
@given(turns(), rules_strategy, st.integers(0, 99))
def test_strength_zero_selects_exactly_as_before(t: Turn, rules: SelectionRules, seed: int) -> None:
    hits = tuple(sorted(t.semantic_hits, key=lambda h: -h.score))
    base = Turn(t.books, t.messages, t.profile, hits)
    assert _shape(_run(_diversified(base, 0.0, seed, set()), rules)) == _shape(_run(base, rules))


@SETTINGS
@given(turns(), rules_strategy, st.floats(0, 1))
def test_a_links_lift_never_breaks_a_budget(t: Turn, rules: SelectionRules, part: float) -> None:
    """The full-score share compares with the best score without the links' lift: any lift
    leaves every budget and cap as it is."""
    lifted = tuple(
        SemanticHit(h.book_id, h.entry_id, h.score, h.score * part) for h in t.semantic_hits
    )
    sel = _run(Turn(t.books, t.messages, t.profile, lifted), rules)
    per_turn = [e for e in sel.injected if e.via is not Via.WHOLE_BOOK]
    used = sum(e.tokens for e in per_turn) + sum(ln.tokens for ln in sel.index)
    assert used == sel.per_turn_tokens <= sel.per_turn_budget
    assert len(per_turn) <= rules.full_entries_max
    assert sum(not ln.linked for ln in sel.index) <= rules.index_topics_max
    assert _shape(sel)[0] == _shape(_run(t, rules))[0]
