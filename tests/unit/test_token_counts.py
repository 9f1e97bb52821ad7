"""TokenCounter: the memory LRU, the persistent level, batching and degradation."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pytest

from worldbook.adapters.tokenizers import get_tokenizer
from worldbook.errors import InvalidInput, StorageUnavailable
from worldbook.ports import TokenCountStore
from worldbook.service.token_counts import TokenCounter, text_hash
from worldbook.testing import WordTokenizer


class CountingTokenizer(WordTokenizer):
    """The word fake, recording every text it was asked to count."""

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return super().count(text)


class FakeStore:
    """An in-memory stand-in for the SQL store's two token-count methods."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], int] = {}
        self.gets: list[tuple[str, list[str]]] = []
        self.puts: list[tuple[str, dict[str, int]]] = []
        self.down = False

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        if self.down:
            raise StorageUnavailable("database is down")
        self.gets.append((tokenizer_id, list(hashes)))
        return {h: self.rows[tokenizer_id, h] for h in hashes if (tokenizer_id, h) in self.rows}

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        if self.down:
            raise StorageUnavailable("database is down")
        self.puts.append((tokenizer_id, dict(counts)))
        for h, n in counts.items():
            self.rows.setdefault((tokenizer_id, h), n)


TEXTS = ["the old gate", "a river, wide and slow.", "the old gate", "north tower"]


def test_fake_store_satisfies_the_protocol() -> None:
    store: TokenCountStore = FakeStore()  # mypy checks the structural match
    assert store.get_token_counts("x", []) == {}


def test_count_many_reads_and_writes_the_store_once_per_batch() -> None:
    tok, store = CountingTokenizer(), FakeStore()
    counter = TokenCounter(tok, store=store)
    assert counter.count_many(TEXTS) == [3, 7, 3, 2]
    assert len(store.gets) == 1 and len(store.puts) == 1
    assert sorted(store.gets[0][1]) == sorted({text_hash(t) for t in TEXTS})
    assert store.puts[0] == ("fake:words", {text_hash(t): tok.count(t) for t in set(TEXTS)})
    assert sorted(tok.counted[:3]) == sorted(set(TEXTS))  # the duplicate was counted once


def test_second_call_is_served_from_memory_without_touching_the_store() -> None:
    tok, store = CountingTokenizer(), FakeStore()
    counter = TokenCounter(tok, store=store)
    counter.count_many(TEXTS)
    tok.counted.clear()
    assert counter.count_many(TEXTS) == [3, 7, 3, 2]
    assert tok.counted == [] and len(store.gets) == 1 and len(store.puts) == 1
    assert counter.memory_hits == 4 and counter.computed == 3


def test_a_new_process_reuses_the_stores_counts() -> None:
    store = FakeStore()
    TokenCounter(CountingTokenizer(), store=store).count_many(TEXTS)
    tok = CountingTokenizer()
    fresh = TokenCounter(tok, store=store)
    assert fresh.count_many(TEXTS) == [3, 7, 3, 2]
    assert tok.counted == [] and fresh.store_hits == 3 and len(store.puts) == 1


def test_only_misses_are_looked_up_and_written() -> None:
    store = FakeStore()
    counter = TokenCounter(CountingTokenizer(), store=store)
    counter.count("the old gate")
    counter.count_many(["the old gate", "new text here"])
    assert store.gets[-1][1] == [text_hash("new text here")]
    assert store.puts[-1][1] == {text_hash("new text here"): 3}


def test_counts_are_keyed_by_the_canonical_tokenizer_id() -> None:
    store = FakeStore()
    TokenCounter(get_tokenizer("cl100k_base"), store=store).count("hello world")
    assert store.puts == [("tiktoken:cl100k_base", {text_hash("hello world"): 2})]
    estimate = TokenCounter(get_tokenizer("estimate"), store=store)
    assert estimate.count("hello world") == 3  # not the cl100k count for the same hash
    assert estimate.is_estimate


def test_memory_lru_evicts_the_least_recently_used() -> None:
    tok = CountingTokenizer()
    counter = TokenCounter(tok, memory_max=2)
    counter.count_many(["a", "b"])
    counter.count("a")  # refresh a; b is now the oldest
    counter.count("c")  # evicts b
    tok.counted.clear()
    counter.count_many(["a", "c", "b"])
    assert tok.counted == ["b"]


def test_memory_can_be_disabled_and_must_not_be_negative() -> None:
    tok = CountingTokenizer()
    counter = TokenCounter(tok, memory_max=0)
    counter.count("x y")
    counter.count("x y")
    assert tok.counted == ["x y", "x y"]
    with pytest.raises(InvalidInput):
        TokenCounter(tok, memory_max=-1)


def test_unavailable_store_degrades_to_counting(caplog: pytest.LogCaptureFixture) -> None:
    store = FakeStore()
    store.down = True
    counter = TokenCounter(CountingTokenizer(), store=store)
    with caplog.at_level(logging.WARNING, logger="worldbook.service.token_counts"):
        assert counter.count_many(TEXTS) == [3, 7, 3, 2]
    assert "token-count cache" in caplog.text
    assert counter.count("the old gate") == 3  # still remembered in memory


def test_stray_rows_from_the_store_are_ignored() -> None:
    class Sloppy(FakeStore):
        def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
            return {"not-asked-for": 99}

    counter = TokenCounter(CountingTokenizer(), store=Sloppy())
    assert counter.count("one two") == 2
    assert counter.store_hits == 0


def test_text_hash_is_sha256_hex_of_utf8() -> None:
    assert text_hash("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert text_hash("你好") != text_hash("你好 ")
