"""Turn a stored book into the core's :class:`LoreBook`: entries in list order, each with its
token count under the turn's tokenizer and whether the vector index scores it.

An entry counts as indexed only when the index's vectors were embedded from its current text
(the hashes match): an edited entry is not scored with its old vectors, even by an index built
before the edit (DESIGN §2 rule 6).

Built books are cached by (book id, book version, index version, index build, tokenizer,
model): any edit bumps the book version and any saved vector bumps the index version (the store
does both, in the same transaction as the change), and the vector index numbers its builds — so
a cached book is never stale, also when the change was made by another API process or a Celery
worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Protocol

from worldbook.core.lru import LRU
from worldbook.core.records import BookRecord, EntryRecord, EntryStamp
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.ports import IndexedEntries
from worldbook.service.token_counts import TokenCounter

IndexedSource = Callable[[str], IndexedEntries]
"""``indexed_entries(book_id)``: what the book's vector index scores now."""

_Key = tuple[str, int, int, int, str, str]


class EntrySource(Protocol):
    """The store calls a book build needs: all entries, their stamps, some entries."""

    def list_entries(self, book_id: str) -> Sequence[EntryRecord]: ...

    def entry_stamps(self, book_id: str) -> Sequence[EntryStamp]: ...

    def get_entries(self, book_id: str, ids: Sequence[str]) -> Sequence[EntryRecord]: ...


_Stamps = dict[str, tuple[int, str, str]]
"""Per entry: position, last change, text hash (whether its vectors are current)."""


class LoreBookCache:
    """Bounded LRU of built :class:`LoreBook` values (thread-safe).

    A new version of a book already built here is built incrementally (issue 13: no turn pays
    for an edit): one narrow query lists every entry's stamp (position, updated_at), only the
    entries whose stamp moved are read in full, and the others are reused — a 2,000-entry book
    costs one small query instead of reading and decoding every row. A change of vectors only
    (index version) re-reads nothing but the indexed flags.
    """

    def __init__(self, store: EntrySource, *, max_books: int = 256) -> None:
        self._store = store
        self._cache: LRU[_Key, LoreBook] = LRU(max_books)
        # (book, tokenizer, model) -> the last build and its stamps: the base of the next one.
        self._latest: LRU[tuple[str, str, str], tuple[LoreBook, _Stamps]] = LRU(max_books)
        self.full_builds = 0
        self.incremental_builds = 0

    def get(
        self,
        book: BookRecord,
        *,
        counter: TokenCounter,
        model_id: str,
        indexed_entries: IndexedSource,
    ) -> LoreBook:
        indexed = indexed_entries(book.id)
        key = (
            book.id,
            book.version,
            book.index_version,
            indexed.build,
            counter.tokenizer_id,
            model_id,
        )
        found = self._cache.get(key)
        if found is not None:
            return found
        base_key = (book.id, counter.tokenizer_id, model_id)
        base = self._latest.get(base_key)
        if base is None:
            built, stamps = self._build(book, counter, indexed)
        else:
            built, stamps = self._rebuild(book, counter, indexed, *base)
        self._cache.put(key, built)
        self._latest.put(base_key, (built, stamps))
        # Older versions of the same book can never be asked for again (other tokenizers of
        # this version can).
        self._cache.discard_where(lambda k: k[0] == book.id and k[1:4] != key[1:4])
        return built

    def _build(
        self, book: BookRecord, counter: TokenCounter, indexed: IndexedEntries
    ) -> tuple[LoreBook, _Stamps]:
        self.full_builds += 1
        # Stamps first: an edit landing between the two reads then looks newer than what was
        # read, and the next version re-reads it (the other order would keep it stale).
        stamps = self._stamps(book.id)
        records = list(self._store.list_entries(book.id))
        tokens = counter.count_many([r.lore for r in records])
        entries = tuple(
            _lore_entry(r, n, indexed.current(r.id, r.content_hash))
            for r, n in zip(records, tokens, strict=True)
        )
        return _lore_book(book, entries), _with_hashes(stamps, records)

    def _stamps(self, book_id: str) -> _Stamps:
        # The hash is filled in from the records read (a stamp does not carry it).
        return {s.entry_id: (s.position, s.changed, "") for s in self._store.entry_stamps(book_id)}

    def _rebuild(
        self,
        book: BookRecord,
        counter: TokenCounter,
        indexed: IndexedEntries,
        previous: LoreBook,
        previous_stamps: _Stamps,
    ) -> tuple[LoreBook, _Stamps]:
        self.incremental_builds += 1
        stamps = self._stamps(book.id)
        moved = [i for i, s in stamps.items() if previous_stamps.get(i, ())[:2] != s[:2]]
        fresh = {r.id: r for r in self._store.get_entries(book.id, moved)} if moved else {}
        fresh_ids = set(moved)  # a moved entry missing from ``fresh`` was deleted meanwhile
        counts = dict(zip(fresh, counter.count_many([r.lore for r in fresh.values()]), strict=True))
        known = {e.id: e for e in previous.entries}
        entries: list[LoreEntry] = []
        for entry_id in list(stamps):  # list order (the stamps come sorted by position)
            record = fresh.get(entry_id)
            if record is not None:
                current = indexed.current(entry_id, record.content_hash)
                entries.append(_lore_entry(record, counts[entry_id], current))
                stamps[entry_id] = (*stamps[entry_id][:2], record.content_hash)
                continue
            old = known.get(entry_id)
            if old is None or entry_id in fresh_ids:  # deleted between the two reads
                del stamps[entry_id]
                continue
            content_hash = previous_stamps[entry_id][2]
            stamps[entry_id] = (*stamps[entry_id][:2], content_hash)
            is_indexed = indexed.current(entry_id, content_hash)
            entries.append(old if old.indexed == is_indexed else replace(old, indexed=is_indexed))
        return _lore_book(book, tuple(entries)), stamps


def _with_hashes(stamps: _Stamps, records: Sequence[EntryRecord]) -> _Stamps:
    """The stamps of the entries read, each with its text hash (entries created after the
    stamps were read are left out: the next version reads them)."""
    hashes = {r.id: r.content_hash for r in records}
    return {i: (*s[:2], hashes[i]) for i, s in stamps.items() if i in hashes}


def _lore_entry(record: EntryRecord, tokens: int, indexed: bool) -> LoreEntry:
    return LoreEntry(
        id=record.id,
        book_id=record.book_id,
        title=record.title,
        lore=record.lore,
        tokens=tokens,
        aliases=record.aliases,
        canon=record.canon,
        enabled=record.enabled,
        indexed=indexed,
    )


def _lore_book(book: BookRecord, entries: tuple[LoreEntry, ...]) -> LoreBook:
    return LoreBook(
        id=book.id,
        title=book.title,
        entries=entries,
        version=str(book.version),  # the matcher depends on titles/aliases only
    )
