"""Maximal marginal relevance over the meaning hits (ADR 0021, core/diversity.py)."""

from __future__ import annotations

import numpy as np
import pytest

from worldbook.core.diversity import diversify, spread
from worldbook.service.diverse_hits import centred_entry_vectors

PAIRS = {frozenset(("a1", "a2")): 0.95, frozenset(("a1", "a3")): 0.9, frozenset(("a2", "a3")): 0.9}


def alike(a: str, b: str) -> float:
    return 1.0 if a == b else PAIRS.get(frozenset((a, b)), 0.0)


HITS = [("a1", 0.30), ("a2", 0.29), ("a3", 0.28), ("b", 0.20), ("c", 0.10)]


def test_strength_zero_gives_the_hits_back() -> None:
    assert diversify(HITS, alike, 0.0) == HITS
    assert diversify(HITS[:1], alike, 3.0) == HITS[:1]


def test_negative_strength_is_refused() -> None:
    with pytest.raises(ValueError):
        diversify(HITS, alike, -1.0)


def test_near_duplicates_of_the_first_give_way_to_the_second_topic() -> None:
    out = diversify(HITS, alike, 2.0)
    assert [k for k, _ in out][:2] == ["a1", "b"]
    assert dict(out)["a1"] == 0.30 and dict(out)["b"] == 0.20  # nothing alike taken before them
    assert dict(out)["a2"] < 0.29


def test_scores_only_go_down_and_the_order_is_the_score_order() -> None:
    out = diversify(HITS, alike, 2.0)
    before = dict(HITS)
    assert sorted(k for k, _ in out) == sorted(before)
    assert all(score <= before[key] for key, score in out)
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)


def test_kept_entries_keep_their_scores_and_push_their_near_duplicates_down() -> None:
    out = dict(diversify(HITS, alike, 2.0, kept=["a2"]))
    assert out["a1"] == 0.30 and out["a2"] == 0.29  # a2 is near a1, but kept
    assert out["a3"] < 0.28  # near both
    assert out["b"] == 0.20


def test_spread() -> None:
    assert spread([]) == 0.0 and spread([1.0]) == 0.0
    assert spread([1.0, 3.0]) == pytest.approx(1.0)


def test_centred_entry_vectors_average_chunks_and_centre_on_the_book() -> None:
    rows = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    order, vectors = centred_entry_vectors(["x", "x", "y", "z"], rows)
    assert order == {"x": 0, "y": 1, "z": 2}
    assert vectors.shape == (3, 3)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    # Three orthogonal entries centred: each pair equally unlike (cosine -1/2).
    assert float(vectors[0] @ vectors[1]) == pytest.approx(-0.5, abs=1e-5)
    empty_order, empty = centred_entry_vectors([], np.zeros((0, 3), np.float32))
    assert empty_order == {} and empty.shape == (0, 3)
