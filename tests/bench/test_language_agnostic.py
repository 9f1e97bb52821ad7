"""LAReQA metrics, the language-subspace projection, and the hard-set files (ADR 0003)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from worldbook.bench.hard_set import KIND_LABELS, load_hard_set
from worldbook.bench.language_agnostic import (
    LanguageSubspace,
    balanced_merge,
    centre_by_language,
    read_corpus,
    standardise_per_language,
)
from worldbook.bench.language_id import detect_language
from worldbook.bench.lareqa import average_precision

SETS = Path(__file__).resolve().parents[2] / "benchmarks" / "hard_set"


def test_average_precision_counts_every_relevant_hit_over_min_relevant_k() -> None:
    relevant = np.array([3, 7])
    assert average_precision(np.array([3, 7, 1]), relevant) == 1.0
    # hits at ranks 2 and 3: (1/2 + 2/3) / 2
    assert average_precision(np.array([1, 3, 7]), relevant) == pytest.approx((0.5 + 2 / 3) / 2)
    assert average_precision(np.array([1, 2, 4]), relevant) == 0.0


def test_projection_removes_the_language_offsets_and_is_idempotent() -> None:
    rng = np.random.default_rng(0)
    content = rng.standard_normal(16).astype(np.float32)
    offsets = rng.standard_normal((3, 16)).astype(np.float32)
    means = content + offsets  # same content, three "languages"
    sub = LanguageSubspace(means)
    assert sub.basis.shape == (2, 16)
    cleaned = sub.remove(means)
    # after removal the three language means coincide: only content is left
    assert np.allclose(cleaned - cleaned.mean(axis=0), 0, atol=1e-5)
    assert np.allclose(sub.remove(cleaned), cleaned, atol=1e-5)


def test_query_side_projection_ranks_like_projecting_both_sides() -> None:
    rng = np.random.default_rng(1)
    sub = LanguageSubspace(rng.standard_normal((4, 8)).astype(np.float32))
    q = rng.standard_normal((1, 8)).astype(np.float32)
    d = rng.standard_normal((5, 8)).astype(np.float32)
    one_side = (sub.remove(q) @ d.T)[0]
    both = (sub.remove(q) @ sub.remove(d).T)[0]
    assert np.allclose(one_side, both, atol=1e-5)


def test_per_language_standardising_and_balancing_work_within_each_language() -> None:
    scores = np.array([[0.9, 0.8, 0.3, 0.2]], dtype=np.float32)
    groups = [np.array([True, True, False, False]), np.array([False, False, True, True])]
    z = standardise_per_language(scores, groups)
    assert z[0, 0] == pytest.approx(z[0, 2]) and z[0, 1] == pytest.approx(z[0, 3])
    merged = balanced_merge(scores, groups)
    order = list(np.argsort(-merged[0]))
    assert order == [0, 2, 1, 3]  # each language's best first, then the second-bests


def test_corpus_is_parallel() -> None:
    corpus = read_corpus()
    assert len(corpus) >= 16
    assert len({len(lines) for lines in corpus.values()}) == 1


@pytest.mark.parametrize("name", ["saltreach", "unseen"])
def test_hard_sets_meet_the_issue_minimums(name: str) -> None:
    hard = load_hard_set(SETS / name)
    world = json.loads(hard.world.read_text(encoding="utf-8"))["entries"]
    titles = {e["comment"] for e in world.values()}
    langs = list(hard.entry_lang.values())
    assert len(world) >= (150 if name == "saltreach" else 80)
    assert sum(1 for x in langs if x != "en") / len(langs) >= 0.15
    assert len(hard.turns) >= (60 if name == "saltreach" else 30)
    assert len({t.lang for t in hard.turns}) >= 8
    assert {t.kind for t in hard.turns} == set(KIND_LABELS)
    for turn in hard.turns:
        assert set(turn.gold) | set(turn.avoid) <= titles
        assert 3 <= len(turn.messages) <= 5


def test_centring_moves_large_language_groups_and_barely_moves_small_ones() -> None:
    rng = np.random.default_rng(2)
    big = rng.standard_normal((200, 4)).astype(np.float32) + np.array([3, 0, 0, 0], np.float32)
    small = rng.standard_normal((2, 4)).astype(np.float32) + np.array([0, 3, 0, 0], np.float32)
    vectors = np.vstack([big, small])
    labels = np.array([0] * 200 + [1] * 2)
    out = centre_by_language(vectors, labels, shrink=20.0)
    overall = vectors.mean(axis=0)
    # the big group's mean lands near the overall mean; the small group moves by 2/22 only
    assert np.allclose(out[:200].mean(axis=0), overall, atol=0.2)
    moved = np.linalg.norm(out[200:].mean(axis=0) - small.mean(axis=0))
    full = np.linalg.norm(small.mean(axis=0) - overall)
    assert moved == pytest.approx(full * 2 / 22, rel=1e-3)


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("The guild of weavers controls the trade in cloth.", "en"),
        ("La guilde des tisserands contrôle le commerce du drap.", "fr"),
        ("Der Schwarze Bund ist ein Geheimbund von Eisenhändlern.", "de"),
        ("El gremio de tejedores controla el comercio de paños.", "es"),
        ("Зарянск — северное княжество за мысом.", "ru"),
        ("陽炎諸島は、エビング海のはるか東に浮かぶ火山の島々である。", "ja"),
        ("金海帝国是艾宾海东南方的大帝国。", "zh"),
        ("해성 왕국은 작은 왕국이다.", "ko"),
        ("Cây cầu cũ được xây bằng đá xám.", "vi"),
    ],
)
def test_detect_language_reads_the_script_then_function_words(text: str, lang: str) -> None:
    assert detect_language(text) == lang
