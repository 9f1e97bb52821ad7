"""Query vectors: each message embedded once, cached by content hash, batched, pre-warmed."""

from __future__ import annotations

import numpy as np
import pytest

from worldbook.errors import InvalidInput
from worldbook.service.query_embeddings import QueryEmbeddings, content_key
from worldbook.testing import HashingEmbedder


def test_a_new_turn_embeds_only_its_new_message() -> None:
    embedder = HashingEmbedder()
    queries = QueryEmbeddings(embedder)
    turn1 = ["hello there", "the dragon sleeps", "where is the sword?"]
    first = queries.embed(turn1)
    assert embedder.calls == [3]
    second = queries.embed([*turn1[1:], "in the tower"])
    assert embedder.calls == [3, 1]  # one batch holding only the new message
    assert np.array_equal(second[:2], first[1:])
    assert np.array_equal(second[2], embedder.embed_queries(["in the tower"])[0])


def test_vectors_equal_the_embedder_and_keep_order() -> None:
    embedder = HashingEmbedder()
    texts = ["b", "a", "b", "c"]
    got = QueryEmbeddings(embedder).embed(texts)
    assert embedder.calls == [3]  # a repeated message is embedded once
    assert np.array_equal(got, embedder.embed_queries(texts))
    assert got.dtype == np.float32


def test_prewarm_makes_the_next_turn_free() -> None:
    embedder = HashingEmbedder()
    queries = QueryEmbeddings(embedder)
    queries.prewarm(["the reply the app just generated"])
    calls = len(embedder.calls)
    queries.embed(["the reply the app just generated"])
    assert len(embedder.calls) == calls
    assert queries.stats().hits == 1


def test_cache_is_bounded_lru() -> None:
    embedder = HashingEmbedder()
    queries = QueryEmbeddings(embedder, max_cached=2)
    queries.embed(["a", "b"])
    queries.embed(["a"])  # a is now the most recent
    queries.embed(["c"])  # evicts b
    assert queries.stats().size == 2
    embedder.calls.clear()
    queries.embed(["a", "c"])
    assert embedder.calls == []
    queries.embed(["b"])
    assert embedder.calls == [1]


def test_no_cache_still_embeds() -> None:
    embedder = HashingEmbedder()
    queries = QueryEmbeddings(embedder, max_cached=0)
    queries.embed(["a"])
    queries.embed(["a"])
    assert embedder.calls == [1, 1]


def test_keys_include_the_model_id() -> None:
    assert content_key("m1", "text") != content_key("m2", "text")
    assert content_key("m1", "text") != content_key("m1", "text ")


def test_vectors_of_another_model_are_never_returned() -> None:
    one, two = HashingEmbedder(model_id="one"), HashingEmbedder(dim=64, model_id="two")
    shared_texts = ["same message"]
    assert QueryEmbeddings(one).embed(shared_texts).shape == (1, 256)
    assert QueryEmbeddings(two).embed(shared_texts).shape == (1, 64)


def test_conversation_takes_the_last_non_blank_messages() -> None:
    embedder = HashingEmbedder()
    queries = QueryEmbeddings(embedder)
    messages = [f"message {i}" for i in range(9)] + ["   "]
    got = queries.embed_conversation(messages, last=6)
    assert np.array_equal(got, embedder.embed_queries(messages[3:9]))
    assert queries.embed_conversation([], last=6).shape == (0, 256)
    with pytest.raises(InvalidInput):
        queries.embed_conversation(messages, last=0)


def test_cached_vectors_cannot_be_modified_by_callers() -> None:
    queries = QueryEmbeddings(HashingEmbedder())
    first = queries.embed(["x"])
    first[0, :] = 0.0  # the returned array is the caller's own
    assert float(np.abs(queries.embed(["x"])).sum()) > 0
