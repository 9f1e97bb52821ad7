"""Token counts of texts, cached by (SHA-256 of the text, tokenizer id).

Counting lore is the hot path of every turn (each candidate entry is measured against the
budget), while lore itself changes rarely, so counts are kept at two levels: an in-process LRU,
then an optional persistent table (the SQL store) shared by every process. A count is a pure
function of (text, tokenizer), so a cached value is never stale and no invalidation exists;
an edited entry simply has a new hash. The tokenizer's *canonical* id is the key, so
``cl100k_base`` and ``tiktoken:cl100k_base`` share their counts.

The persistent level is best-effort: if the store is unavailable the counter logs a warning
and counts from the text, because a turn must not fail for want of a cache.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence

from worldbook.core.tokens import Tokenizer
from worldbook.errors import InvalidInput, StorageUnavailable
from worldbook.ports import TokenCountStore
from worldbook.runtime.lru import LRU

log = logging.getLogger(__name__)

MEMORY_COUNTS_MAX = 50_000
"""Counts kept in memory (~150 bytes each: ~7 MB), about 25 full books of 2,000 entries."""


def text_hash(text: str) -> str:
    """The cache key of a text: hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class TokenCounter:
    """Counts texts with one tokenizer through the memory LRU and the optional store.

    Thread-safe: the LRU is guarded by a lock; tokenizing happens outside it.
    """

    def __init__(
        self,
        tokenizer: Tokenizer,
        *,
        store: TokenCountStore | None = None,
        memory_max: int = MEMORY_COUNTS_MAX,
    ) -> None:
        if memory_max < 0:
            raise InvalidInput(f"memory_max must be >= 0; got {memory_max}.", field="memory_max")
        self._tokenizer = tokenizer
        self._store = store
        self._memory: LRU[str, int] | None = LRU(memory_max) if memory_max else None
        self._lock = threading.Lock()
        # Where answers came from, for tests and the benchmark.
        self.memory_hits = 0
        self.store_hits = 0
        self.computed = 0

    @property
    def tokenizer(self) -> Tokenizer:
        return self._tokenizer

    @property
    def tokenizer_id(self) -> str:
        return self._tokenizer.id

    @property
    def is_estimate(self) -> bool:
        return self._tokenizer.is_estimate

    def count(self, text: str) -> int:
        return self.count_many([text])[0]

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Counts of ``texts`` in order: one store read and one store write for all misses."""
        hashes = [text_hash(text) for text in texts]
        found = self._from_memory(hashes)
        missing = {h: text for h, text in zip(hashes, texts, strict=True) if h not in found}
        if missing:
            stored = self._from_store(list(missing))
            found.update(stored)
            computed = {
                h: self._tokenizer.count(text) for h, text in missing.items() if h not in stored
            }
            found.update(computed)
            self._remember({**stored, **computed})
            self._to_store(computed)
        return [found[h] for h in hashes]

    def _from_memory(self, hashes: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        if self._memory is None:
            return found
        for h in hashes:
            value = self._memory.get(h)
            if value is not None:
                found[h] = value
        with self._lock:
            self.memory_hits += sum(1 for h in hashes if h in found)
        return found

    def _remember(self, counts: dict[str, int]) -> None:
        if self._memory is None:
            return
        for h, value in counts.items():
            self._memory.put(h, value)

    def _from_store(self, hashes: list[str]) -> dict[str, int]:
        if self._store is None:
            return {}
        try:
            stored = self._store.get_token_counts(self.tokenizer_id, hashes)
        except StorageUnavailable as exc:
            log.warning("token-count cache unreadable, counting from text: %s", exc)
            return {}
        wanted = set(hashes)
        stored = {h: n for h, n in stored.items() if h in wanted}
        with self._lock:
            self.store_hits += len(stored)
        return stored

    def _to_store(self, computed: dict[str, int]) -> None:
        with self._lock:
            self.computed += len(computed)
        if self._store is None or not computed:
            return
        try:
            self._store.put_token_counts(self.tokenizer_id, computed)
        except StorageUnavailable as exc:
            log.warning("token-count cache not written: %s", exc)
