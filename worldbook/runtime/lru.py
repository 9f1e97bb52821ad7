"""One bounded, thread-safe LRU map for every in-process cache of worldbook.

Built books, literal matchers and their derived texts, token counts, query vectors and FAISS
indexes are all caches of values that are pure functions of their keys (a key names a book
*version*, a content hash or a model id), so a cached value is never stale and the only policy
needed is a bound: at most ``max_items`` values and, optionally, at most ``max_weight`` units of
weight (bytes for vector indexes). The least recently used values are evicted first.

Values are computed outside the lock (:meth:`LRU.get_or_compute`): building a 100,000-alias
automaton takes a second and other callers must not wait for it. Two threads may then compute
the same value; the last one stored wins, which is harmless for pure values.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from worldbook.runtime.metrics import metrics

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A bounded least-recently-used map.

    Args:
        max_items: most values kept (at least 1).
        max_weight: most total weight kept; ``None`` for no weight bound.
        weigh: the weight of a value (required with ``max_weight``).
    """

    def __init__(
        self,
        max_items: int,
        *,
        max_weight: int | None = None,
        weigh: Callable[[V], int] | None = None,
        name: str | None = None,
    ) -> None:
        if max_items < 1:
            raise ValueError(f"max_items must be at least 1; got {max_items}")
        if (max_weight is None) != (weigh is None):
            raise ValueError("max_weight and weigh go together")
        self._max_items = max_items
        self._max_weight = max_weight
        self._weigh = weigh
        self._items: OrderedDict[K, V] = OrderedDict()
        self._weights: dict[K, int] = {}
        self._weight = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        # A named cache reports its size and evictions as metrics (ADR 0018).
        self._name = name

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)

    def __contains__(self, key: K) -> bool:
        with self._lock:
            return key in self._items

    @property
    def weight(self) -> int:
        """Total weight of the values kept (0 without a weight bound)."""
        with self._lock:
            return self._weight

    def keys(self) -> list[K]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._items)

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
            return None

    def put(self, key: K, value: V) -> bool:
        """Keep ``value`` under ``key``; False when it alone outweighs the bound (not kept)."""
        weight = self._weigh(value) if self._weigh is not None else 0
        with self._lock:
            if self._max_weight is not None and weight > self._max_weight:
                self._remove(key)
                return False
            self._remove(key)
            self._items[key] = value
            self._weights[key] = weight
            self._weight += weight
            evicted = self._evict()
            if self._name is not None:
                found = metrics()
                found.cache_size.labels(self._name).set(len(self._items))
                if evicted:
                    found.cache_evictions.labels(self._name).inc(evicted)
            return True

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The cached value, or ``compute()`` stored and returned (computed outside the lock)."""
        found = self.get(key)
        if found is not None:
            return found
        value = compute()
        self.put(key, value)
        return value

    def pop(self, key: K) -> V | None:
        """Remove ``key``; its value or None."""
        with self._lock:
            value = self._items.get(key)
            self._remove(key)
            return value

    def discard_where(self, stale: Callable[[K], bool]) -> int:
        """Remove every key for which ``stale(key)`` is true (e.g. older versions of a book)."""
        with self._lock:
            doomed = [k for k in self._items if stale(k)]
            for key in doomed:
                self._remove(key)
            return len(doomed)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weights.clear()
            self._weight = 0

    def _remove(self, key: K) -> None:
        if key in self._items:
            del self._items[key]
            self._weight -= self._weights.pop(key)

    def _evict(self) -> int:
        limit = self._max_weight
        evicted = 0
        while len(self._items) > self._max_items or (limit is not None and self._weight > limit):
            key, _ = self._items.popitem(last=False)
            self._weight -= self._weights.pop(key)
            evicted += 1
        return evicted
