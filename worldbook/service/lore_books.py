"""Turn a stored book into the core's :class:`LoreBook`: entries in list order, each with its
token count under the turn's tokenizer and whether a current vector of the active model exists.

Built books are cached by (book id, book version, index version, tokenizer, model): any edit
bumps the book version and any saved vector bumps the index version (the store does both, in
the same transaction as the change), so a cached book is never stale — also when the change
was made by another API process or a Celery worker.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from worldbook.adapters.store import BookRecord, SqlStore
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.service.token_counts import TokenCounter

IndexedIds = Callable[[str], frozenset[str]]
"""``indexed_ids(book_id)``: entries of the book that have a current vector of the model."""

_Key = tuple[str, int, int, str, str]


class LoreBookCache:
    """Bounded LRU of built :class:`LoreBook` values (thread-safe)."""

    def __init__(self, store: SqlStore, *, max_books: int = 256) -> None:
        self._store = store
        self._max_books = max_books
        self._cache: OrderedDict[_Key, LoreBook] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self,
        book: BookRecord,
        *,
        counter: TokenCounter,
        model_id: str,
        indexed_ids: IndexedIds,
    ) -> LoreBook:
        key = (book.id, book.version, book.index_version, counter.tokenizer_id, model_id)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        built = self._build(book, counter, indexed_ids)
        with self._lock:
            self._cache[key] = built
            self._cache.move_to_end(key)
            # Older versions of the same book can never be asked for again.
            for stale in [k for k in self._cache if k[0] == book.id and k != key]:
                del self._cache[stale]
            while len(self._cache) > self._max_books:
                self._cache.popitem(last=False)
        return built

    def _build(self, book: BookRecord, counter: TokenCounter, indexed_ids: IndexedIds) -> LoreBook:
        records = self._store.list_entries(book.id)
        tokens = counter.count_many([r.lore for r in records])
        indexed = indexed_ids(book.id)
        entries = tuple(
            LoreEntry(
                id=r.id,
                book_id=book.id,
                title=r.title,
                lore=r.lore,
                tokens=n,
                aliases=r.aliases,
                canon=r.canon,
                enabled=r.enabled,
                indexed=r.id in indexed,
            )
            for r, n in zip(records, tokens, strict=True)
        )
        return LoreBook(
            id=book.id,
            title=book.title,
            entries=entries,
            version=str(book.version),  # the matcher depends on titles/aliases only
        )
