"""Regex safety (classic.md §1 rule 10: never an exception, bounded time), the matcher cache,
and the seeded draws."""

from __future__ import annotations

import time
from dataclasses import replace

import pytest

from tests.unit.classic.helpers import COUNT, book, chat, entry, fate, ids, run
from worldbook.core.classic import ClassicTurn, select_classic
from worldbook.core.classic.draws import TurnDraws, uniform
from worldbook.core.classic.keys import RegexClock, compile_regex, nested_quantifier
from worldbook.runtime.classic_cache import ClassicMatcherCache


@pytest.mark.parametrize(
    "pattern", ["(a+)+$", "(a*)*b", "(\\w+\\s?)*$", "((ab)+c?)+", "(x{2,})+", "(?:a+){3,}"]
)
def test_nested_unbounded_quantifiers_are_refused(pattern: str) -> None:
    assert nested_quantifier(pattern) is not None
    key = compile_regex(f"/{pattern}/", pattern, "")
    assert key.pattern is None and key.problem and "refused" in key.problem


@pytest.mark.parametrize(
    "pattern", ["a+b+", "(ab)+", "[(a+)]+", "\\(a+\\)+", "(a{1,3})+", "(?<name>dragon)s?", "x*"]
)
def test_ordinary_patterns_are_accepted(pattern: str) -> None:
    assert nested_quantifier(pattern) is None
    assert compile_regex(f"/{pattern}/", pattern, "").pattern is not None


def test_refused_regex_is_reported_in_the_trace() -> None:
    result = run(book(entry("e", "/(a+)+$/")), chat("a" * 40 + "!"))
    assert ids(result) == []
    assert "refused" in fate(result, "e").reason


def test_slow_regex_is_cut_by_the_time_budget() -> None:
    # Not nested, but exponential through overlapping alternatives: left to the time limit.
    slow = compile_regex("/(a|aa)*$/", "(a|aa)*$", "")
    assert slow.pattern is not None
    clock = RegexClock(budget_s=0.05)
    started = time.perf_counter()
    assert clock.search(slow, "a" * 60 + "!") is False
    assert time.perf_counter() - started < 1.0
    assert "timed out" in clock.timed_out[slow.source]
    assert clock.search(slow, "aa") is False  # dropped for the rest of the turn


def test_timeouts_reach_the_result_notes() -> None:
    b = book(entry("e", "/(a|aa)*$/"))
    result = run(b, chat("a" * 60 + "!"))
    assert ids(result) == []
    assert any("timed out" in note for note in result.notes)


def test_the_cache_compiles_a_version_once_and_keys_on_it() -> None:
    cache = ClassicMatcherCache()
    b = book(entry("e", "Gondor"))
    turn = ClassicTurn((b,), chat("Gondor"), COUNT)
    for _ in range(3):
        select_classic(turn, None, cache)
    assert cache.builds == 1
    edited = replace(book(entry("e", "Rohan")), cache_key="v2")  # a new version, a new key
    result = select_classic(ClassicTurn((edited,), chat("Rohan"), COUNT), None, cache)
    assert ids(result) == ["e"] and cache.builds == 2


def test_an_empty_cache_is_used_not_replaced() -> None:
    cache = ClassicMatcherCache()
    assert len(cache) == 0
    select_classic(ClassicTurn((book(entry("e", "Gondor")),), chat("x"), COUNT), None, cache)
    assert len(cache) == 1


def test_books_without_a_cache_key_are_not_cached() -> None:
    cache = ClassicMatcherCache()
    b = replace(book(entry("e", "Gondor")), cache_key="")
    for _ in range(2):
        select_classic(ClassicTurn((b,), chat("x"), COUNT), None, cache)
    assert cache.builds == 2 and len(cache) == 0


def test_the_cache_is_bounded() -> None:
    cache = ClassicMatcherCache(max_books=2)
    for i in range(4):
        b = book(entry("e", "Gondor", book_id=f"b{i}"), book_id=f"b{i}")
        cache.get(b)
    assert len(cache) == 2


def test_draws_are_uniform_stable_and_keyed() -> None:
    draws = TurnDraws(7, "chat", 10)
    assert draws.probability("b", "e") == TurnDraws(7, "chat", 10).probability("b", "e")
    assert draws.probability("b", "e") != TurnDraws(8, "chat", 10).probability("b", "e")
    assert draws.probability("b", "e") != TurnDraws(7, "chat", 12).probability("b", "e")
    values = [uniform("x", i) for i in range(2000)]
    assert all(0 <= v < 1 for v in values)
    assert 0.45 < sum(values) / len(values) < 0.55
