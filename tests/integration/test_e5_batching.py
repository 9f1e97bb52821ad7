"""Batched and packed embedding with the real e5-small engine gives each text its own vector.

The torch engine packs a batch's tokens without padding and runs the attention per text;
``BatchingEmbedder`` relies on that to put concurrent callers' messages into one call. Both must
leave every vector as it is alone (cosine ≥ 0.9999: bfloat16 products may differ in the last
bits with the row count).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
import torch

from tests.integration.e5_texts import LONG, TEXTS
from worldbook.adapters.embedders.batching import BatchingEmbedder
from worldbook.adapters.embedders.e5 import TorchE5Embedder
from worldbook.adapters.embedders.e5_torch import E5TorchEncoder, _Packing
from worldbook.ports import Vectors

pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def engine() -> TorchE5Embedder:
    return TorchE5Embedder(threads=1)


def alone(engine: TorchE5Embedder, texts: Sequence[str], *, queries: bool = True) -> Vectors:
    embed = engine.embed_queries if queries else engine.embed_passages
    return np.stack([embed([t])[0] for t in texts])


def test_a_packed_batch_of_mixed_lengths_gives_each_text_its_vector(
    engine: TorchE5Embedder,
) -> None:
    texts = [*TEXTS, LONG]
    for queries in (True, False):
        embed = engine.embed_queries if queries else engine.embed_passages
        cosines = np.sum(embed(texts) * alone(engine, texts, queries=queries), axis=1)
        assert cosines.min() >= 0.9999, cosines.round(6).tolist()


def test_texts_of_a_batch_would_change_if_they_attended_to_each_other(
    engine: TorchE5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The check above can fail: with one attention over the whole packed batch (what packing
    # without per-text attention would do), texts see each other's tokens and their vectors
    # move well away from the ones they get alone.
    per_text = E5TorchEncoder._attention

    def one_attention(self: E5TorchEncoder, qkv: torch.Tensor, packing: _Packing) -> torch.Tensor:
        return per_text(self, qkv, _Packing([qkv.shape[0]]))

    texts = TEXTS[:3]
    reference = alone(engine, texts)
    monkeypatch.setattr(E5TorchEncoder, "_attention", one_attention)
    mixed = engine.embed_queries(texts)
    assert np.sum(mixed * reference, axis=1).min() < 0.999


class HeldEmbedder:
    """The real engine, with its first call held until ``release`` so others queue meanwhile."""

    loaded = True

    def __init__(self, inner: TorchE5Embedder) -> None:
        self.inner = inner
        self.model_id, self.dim = inner.model_id, inner.dim
        self.max_passage_chars = inner.max_passage_chars
        self.entered, self.release = threading.Event(), threading.Event()
        self.sizes: list[int] = []

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.sizes.append(len(texts))
        self.entered.set()
        assert self.release.wait(60)
        return self.inner.embed_queries(texts)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self.inner.embed_passages(texts)


def test_concurrent_callers_batched_get_the_vectors_they_get_alone(
    engine: TorchE5Embedder,
) -> None:
    held = HeldEmbedder(engine)
    batching = BatchingEmbedder(held, max_wait_ms=0, max_batch=32)
    results: dict[int, Vectors] = {}

    def call(i: int, texts: list[str]) -> None:
        results[i] = batching.embed_queries(texts)

    first = threading.Thread(target=call, args=(-1, ["leader message"]))
    first.start()
    assert held.entered.wait(60)
    messages = [m for m in TEXTS if m]
    callers = [threading.Thread(target=call, args=(i, [m])) for i, m in enumerate(messages)]
    for c in callers:
        c.start()
    with batching._changed:
        assert batching._changed.wait_for(lambda: len(batching._queue) == len(callers), 60)
    held.release.set()
    for t in [first, *callers]:
        t.join(120)
    assert held.sizes == [1, len(callers)]  # the followers shared one inner call
    expected = alone(engine, messages)
    got = np.concatenate([results[i] for i in range(len(callers))])
    cosines = np.sum(got * expected, axis=1)
    assert cosines.min() >= 0.9999, cosines.round(6).tolist()
