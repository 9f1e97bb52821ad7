"""The re-implemented peer methods behave as their documentation says (peers.md §1.1–1.2)."""

from __future__ import annotations

import numpy as np

from worldbook.bench.peers import (
    KeywordScan,
    PeerEntry,
    budget_by_order,
    list_order,
    vector_storage_ranking,
)


def entry(title: str, keys: tuple[str, ...], tokens: int = 10, **kw: object) -> PeerEntry:
    return PeerEntry(title=title, content=f"{title} lore", tokens=tokens, keys=keys, **kw)  # type: ignore[arg-type]


def test_whole_words_case_insensitive() -> None:
    scan = KeywordScan([entry("fire", ("feu",)), entry("cat", ("Cat",))])
    assert scan.select(["une feuille", "the CAT sleeps"], 1000) == [scan.entries[1]]
    assert [e.title for e in scan.select(["au feu !"], 1000)] == ["fire"]


def test_ascii_word_boundaries_as_in_javascript() -> None:
    # peers.md §1.1: JS \\W without the u flag makes every non-ASCII letter a boundary.
    scan = KeywordScan([entry("cat", ("кот",)), entry("tower", ("黑塔",))])
    assert [e.title for e in scan.select(["котик спит"], 1000)] == ["cat"]
    assert [e.title for e in scan.select(["黑塔最近在研究什么"], 1000)] == ["tower"]


def test_multi_word_key_is_a_substring_test() -> None:
    scan = KeywordScan([entry("pat", ("pats you on the head",))])
    assert scan.select(["She pats you on the heads."], 1000)


def test_scan_depth_is_two_messages() -> None:
    scan = KeywordScan([entry("dragon", ("dragon",))])
    assert not scan.select(["a dragon!", "hello", "how are you"], 1000)
    assert scan.select(["a dragon!", "hello"], 1000)


def test_regex_keys_and_secondary_filter() -> None:
    scan = KeywordScan(
        [
            entry("re", ("/test\\d+/",)),
            entry("and", ("city",), secondary_keys=("snow", "storm"), selective_logic=0),
            entry("not", ("city",), secondary_keys=("snow",), selective_logic=2),
        ]
    )
    assert [e.title for e in scan.select(["run test42", "the city"], 1000)] == ["re", "not"]
    assert [e.title for e in scan.select(["the city in snow"], 1000)] == ["and"]


def test_budget_constants_first_then_order_and_stops_at_first_overflow() -> None:
    a = entry("a", (), tokens=50, order=10)
    b = entry("b", (), tokens=60, order=30)
    c = entry("c", (), tokens=20, order=20)
    k = entry("k", (), tokens=30, order=0, constant=True)
    # c (20) would overflow after k + b (90): the loop stops there and never tries a.
    assert [e.title for e in budget_by_order([a, b, c, k], 100)] == ["k", "b"]
    assert [e.title for e in list_order([a, b, c], 100)] == ["a"]


def test_vector_storage_top5_above_threshold() -> None:
    vectors = np.eye(8, dtype=np.float32)
    query = np.array([0.9, 0.3, 0.28, 0.27, 0.26, 0.6, 0.1, 0.0], dtype=np.float32)
    ranked = vector_storage_ranking(vectors, query)
    assert [i for i, _ in ranked] == [0, 5, 1, 2, 3]
    low = vector_storage_ranking(vectors, np.full(8, 0.2, dtype=np.float32))
    assert low == []


def test_recursive_scan_follows_content_for_at_most_the_given_passes() -> None:
    chain = [
        PeerEntry("a", "Alpha names Beta.", 5, keys=("Alpha",)),
        PeerEntry("b", "Beta names Gamma.", 5, keys=("Beta",)),
        PeerEntry("c", "Gamma ends.", 5, keys=("Gamma",)),
        PeerEntry("k", "always", 5, constant=True),
    ]
    scan = KeywordScan(chain)
    assert scan.activated_recursive(["old", "Alpha here"], scan_depth=1) == [0, 3, 1, 2]
    assert scan.activated_recursive(["Alpha here"], scan_depth=1, max_passes=2) == [0, 3, 1]
    assert scan.activated_recursive(["Alpha here", "later"], scan_depth=1) == [3]
