"""Conversation messages to query vectors, each distinct message embedded once.

A turn compares the last few messages with the lore (DESIGN §2: the last 6). From one turn to the
next only one or two of them are new, so vectors are cached by model id and content hash in a
bounded LRU, and a turn embeds only its new messages, in one batch. ``prewarm`` lets an app send
a finished reply ahead of the next turn, so its vector is ready when the turn arrives (an e5-class
model costs ~20 ms a message on 2 cores,
docs/design/semantic-search.md).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from worldbook.core.embed_text import head_units
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder, Vectors
from worldbook.runtime.lru import LRU
from worldbook.runtime.metrics import metrics


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    misses: int
    size: int


def content_key(model_id: str, text: str) -> str:
    """Cache key of one message: the model id and a hash of the exact text."""
    return f"{model_id}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"


class QueryEmbeddings:
    """Embeds conversation messages through ``embedder`` with a bounded message cache.

    Args:
        embedder: the active embedder (its ``model_id`` is part of every key, so a model change
            never reuses a vector).
        max_cached: how many message vectors stay cached (LRU). 4,096 × 384 float32 ≈ 6 MB.
    """

    def __init__(
        self, embedder: Embedder, *, max_cached: int = 4096, max_query_chars: int | None = None
    ) -> None:
        if max_cached < 0:
            raise InvalidInput(
                f"max_cached must be 0 or more; got {max_cached}.", field="max_cached"
            )
        self._embedder = embedder
        # A message longer than the model reads is embedded by its head, not windowed: a
        # 10 MB message once cost 225 s of windows (DESIGN §6). Units weigh wide characters.
        self._max_units = min(embedder.max_passage_chars, max_query_chars or 10**9)
        self._cache: LRU[str, Vectors] | None = LRU(max_cached) if max_cached else None
        self._lock = threading.Lock()  # guards the hit/miss counters
        self._hits = 0
        self._misses = 0

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One query vector per text, in order; only texts not cached reach the model, once
        each, in one batch."""
        model_id = self._embedder.model_id
        texts = [head_units(t, self._max_units) for t in texts]
        keys = [content_key(model_id, t) for t in texts]
        found: dict[str, Vectors] = {}
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            vector = self._cache.get(key) if self._cache is not None else None
            if vector is not None:
                found[key] = vector
            elif key not in missing:
                missing[key] = text
        with self._lock:
            self._hits += len(found)
            self._misses += len(missing)
        counted = metrics().query_cache
        counted.labels("hit").inc(len(found))
        counted.labels("miss").inc(len(missing))
        if missing:
            # Embedded outside any lock: another turn's cached messages need not wait.
            vectors = self._embedder.embed_queries(list(missing.values()))
            fresh = dict(zip(missing, vectors, strict=True))
            found.update(fresh)
            for key, vector in fresh.items():
                self._store(key, vector)
        if not keys:
            return np.zeros((0, self._embedder.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)

    def embed_conversation(self, messages: Sequence[str], last: int = 6) -> Vectors:
        """Vectors of the last ``last`` non-blank messages, oldest first (the turn's query)."""
        if last < 1:
            raise InvalidInput(f"last must be at least 1; got {last}.", field="last")
        recent = [m for m in messages if m.strip()][-last:]
        return self.embed(recent)

    def prewarm(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` now (e.g. a reply just generated) so the next turn finds them cached."""
        self.embed(texts)

    def stats(self) -> CacheStats:
        size = len(self._cache) if self._cache is not None else 0
        with self._lock:
            return CacheStats(hits=self._hits, misses=self._misses, size=size)

    def clear(self) -> None:
        if self._cache is not None:
            self._cache.clear()

    def _store(self, key: str, vector: Vectors) -> None:
        if self._cache is None:
            return
        vector = np.array(vector, dtype=np.float32)  # own copy: never a view of a batch
        vector.setflags(write=False)
        self._cache.put(key, vector)
