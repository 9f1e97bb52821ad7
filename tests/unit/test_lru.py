"""The one bounded LRU behind every in-process cache (core/lru.py)."""

from __future__ import annotations

import threading

import pytest

from worldbook.runtime.lru import LRU


def test_least_recently_used_goes_first() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.keys() == ["a", "c"]
    assert cache.get("b") is None


def test_weight_bound_evicts_and_refuses_a_value_heavier_than_the_bound() -> None:
    cache: LRU[str, bytes] = LRU(10, max_weight=10, weigh=len)
    assert cache.put("a", b"12345")
    assert cache.put("b", b"12345")
    assert cache.put("c", b"123")  # 13 > 10: "a" goes
    assert cache.keys() == ["b", "c"] and cache.weight == 8
    assert not cache.put("huge", b"x" * 11)
    assert "huge" not in cache and cache.weight == 8


def test_replacing_a_key_does_not_count_its_weight_twice() -> None:
    cache: LRU[str, bytes] = LRU(10, max_weight=10, weigh=len)
    cache.put("a", b"123456")
    cache.put("a", b"1234567")
    assert cache.weight == 7 and len(cache) == 1


def test_discard_where_drops_only_matching_keys() -> None:
    cache: LRU[tuple[str, int], str] = LRU(10)
    for version in (1, 2, 3):
        cache.put(("book", version), f"v{version}")
    cache.put(("other", 1), "o")
    assert cache.discard_where(lambda k: k[0] == "book" and k[1] != 3) == 2
    assert sorted(cache.keys()) == [("book", 3), ("other", 1)]


def test_get_or_compute_computes_once_and_counts_hits() -> None:
    cache: LRU[str, int] = LRU(4)
    calls: list[int] = []

    def compute(value: int) -> int:
        calls.append(value)
        return value

    assert cache.get_or_compute("k", lambda: compute(7)) == 7
    assert cache.get_or_compute("k", lambda: compute(8)) == 7
    assert calls == [7] and cache.hits == 1 and cache.misses == 1


def test_bounds_must_make_sense() -> None:
    with pytest.raises(ValueError):
        LRU(0)
    with pytest.raises(ValueError):
        LRU(1, max_weight=5)


def test_concurrent_puts_keep_the_bound() -> None:
    cache: LRU[int, int] = LRU(50)

    def fill(base: int) -> None:
        for i in range(2000):
            cache.put(base + i, i)

    threads = [threading.Thread(target=fill, args=(n * 10_000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50
