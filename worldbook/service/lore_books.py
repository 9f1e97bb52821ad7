"""Turn a stored book into the core's :class:`LoreBook`: entries in list order, each with its
token count under the turn's tokenizer and whether a current vector of the active model exists.

Built books are cached by (book id, book version, index version, tokenizer, model): any edit
bumps the book version and any saved vector bumps the index version (the store does both, in
the same transaction as the change), so a cached book is never stale — also when the change
was made by another API process or a Celery worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from worldbook.core.lru import LRU
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.service.token_counts import TokenCounter

IndexedIds = Callable[[str], frozenset[str]]
"""``indexed_ids(book_id)``: entries of the book that have a current vector of the model."""

_Key = tuple[str, int, int, str, str]


class EntryLister(Protocol):
    """The one store call a book build needs."""

    def list_entries(self, book_id: str) -> Sequence[EntryRecord]: ...


class LoreBookCache:
    """Bounded LRU of built :class:`LoreBook` values (thread-safe)."""

    def __init__(self, store: EntryLister, *, max_books: int = 256) -> None:
        self._store = store
        self._cache: LRU[_Key, LoreBook] = LRU(max_books)

    def get(
        self,
        book: BookRecord,
        *,
        counter: TokenCounter,
        model_id: str,
        indexed_ids: IndexedIds,
    ) -> LoreBook:
        key = (book.id, book.version, book.index_version, counter.tokenizer_id, model_id)
        found = self._cache.get(key)
        if found is not None:
            return found
        built = self._build(book, counter, indexed_ids)
        self._cache.put(key, built)
        # Older versions of the same book can never be asked for again (other tokenizers of
        # this version can).
        self._cache.discard_where(lambda k: k[0] == book.id and k[1:3] != key[1:3])
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
