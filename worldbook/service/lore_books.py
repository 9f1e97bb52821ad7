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

from collections.abc import Callable
from dataclasses import dataclass, replace

from worldbook.core.glosses import reader_languages
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.ports import EntryReader, IndexedEntries
from worldbook.runtime.lru import LRU
from worldbook.service.same_named import same_named
from worldbook.service.token_counts import TokenCounter

IndexedSource = Callable[[str], IndexedEntries]
"""``indexed_entries(book_id)``: what the book's vector index scores now."""

_Key = tuple[str, int, int, int, str, str]


_Stamps = dict[str, tuple[int, str]]
"""Per entry: position and last change, in list order."""


@dataclass(frozen=True, slots=True)
class _Base:
    """The last build of a book (per tokenizer and model): what the next version starts from."""

    book: LoreBook
    stamps: _Stamps
    hashes: dict[str, str]  # per entry, the hash of the text it was built from
    index_build: int  # the vector index build its indexed flags were taken from


class LoreBookCache:
    """Bounded LRU of built :class:`LoreBook` values (thread-safe).

    A new version of a book already built here is built incrementally (ADR 0008: no turn pays
    for an edit): one narrow query lists every entry's stamp (position, updated_at), only the
    entries whose stamp moved are read in full, and the others are reused — a 2,000-entry book
    costs one small query instead of reading and decoding every row. A change of vectors only
    (index version) re-reads nothing but the indexed flags.
    """

    def __init__(self, store: EntryReader, *, max_books: int = 256) -> None:
        self._store = store
        self._cache: LRU[_Key, LoreBook] = LRU(max_books)
        # (book, tokenizer, model) -> the last build: the base of the next one.
        self._latest: LRU[tuple[str, str, str], _Base] = LRU(max_books)
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
            made = self._build(book, counter, indexed)
        else:
            made = self._rebuild(book, counter, indexed, base)
        self._cache.put(key, made.book)
        self._latest.put(base_key, made)
        # Older versions of the same book can never be asked for again (other tokenizers of
        # this version can).
        self._cache.discard_where(lambda k: k[0] == book.id and k[1:4] != key[1:4])
        return made.book

    def _build(self, book: BookRecord, counter: TokenCounter, indexed: IndexedEntries) -> _Base:
        self.full_builds += 1
        # Stamps first: an edit landing between the two reads then looks newer than what was
        # read, and the next version re-reads it (the other order would keep it stale).
        stamps = self._stamps(book.id)
        records = list(self._store.list_entries(book.id))
        tokens = counter.count_many([sent_lore(r) for r in records])
        entries = tuple(
            _lore_entry(r, n, indexed.current(r.id, r.content_hash))
            for r, n in zip(records, tokens, strict=True)
        )
        # Entries created after the stamps were read are left out of the stamps: the next
        # version reads them again.
        hashes = {r.id: r.content_hash for r in records}
        stamps = {i: s for i, s in stamps.items() if i in hashes}
        return _Base(_lore_book(book, entries), stamps, hashes, indexed.build)

    def _stamps(self, book_id: str) -> _Stamps:
        return {s.entry_id: (s.position, s.changed) for s in self._store.entry_stamps(book_id)}

    def _rebuild(
        self, book: BookRecord, counter: TokenCounter, indexed: IndexedEntries, base: _Base
    ) -> _Base:
        self.incremental_builds += 1
        if str(book.version) == base.book.version:
            # Only vectors changed (every entry change bumps the book version): the entries
            # are the ones built; only their indexed flags may differ.
            flagged = tuple(_flagged(e, indexed, base.hashes[e.id]) for e in base.book.entries)
            return _Base(_lore_book(book, flagged), base.stamps, base.hashes, indexed.build)
        stamps = self._stamps(book.id)
        moved = [i for i, s in stamps.items() if base.stamps.get(i) != s]
        fresh = {r.id: r for r in self._store.get_entries(book.id, moved)} if moved else {}
        counts = counter.count_many([sent_lore(r) for r in fresh.values()])
        made = {
            i: _lore_entry(r, n, indexed.current(i, r.content_hash))
            for (i, r), n in zip(fresh.items(), counts, strict=True)
        }
        hashes = base.hashes | {i: r.content_hash for i, r in fresh.items()}
        same_index = indexed.build == base.index_build
        if same_index and len(fresh) == len(moved) and list(stamps) == list(base.stamps):
            # Only edits in place (no entry added, removed or moved) under the same index
            # build — the common edit: swap the edited entries, keep every other one as is.
            swapped = tuple(made.get(e.id, e) for e in base.book.entries)
            return _Base(_lore_book(book, swapped), stamps, hashes, indexed.build)
        known = {e.id: e for e in base.book.entries}
        moved_ids = set(moved)
        entries: list[LoreEntry] = []
        for entry_id in list(stamps):  # list order (the stamps come sorted by position)
            entry = made.get(entry_id) or known.get(entry_id)
            # A moved entry missing from ``fresh`` was deleted between the two reads.
            if entry is None or (entry_id in moved_ids and entry_id not in made):
                del stamps[entry_id]
            elif entry_id in made or same_index:
                entries.append(entry)
            else:
                entries.append(_flagged(entry, indexed, hashes[entry_id]))
        hashes = {i: hashes[i] for i in stamps}
        return _Base(_lore_book(book, tuple(entries)), stamps, hashes, indexed.build)


def _flagged(entry: LoreEntry, indexed: IndexedEntries, content_hash: str) -> LoreEntry:
    """``entry`` with its indexed flag as ``indexed`` has it (itself when unchanged)."""
    flag = indexed.current(entry.id, content_hash)
    return entry if entry.indexed == flag else replace(entry, indexed=flag)


def sent_lore(record: EntryRecord) -> str:
    """The lore a turn works on: the stored text without the whitespace around it, so the
    text counted is byte for byte the text rendered (DESIGN §2 budget table)."""
    return record.lore.strip()


def _lore_entry(record: EntryRecord, tokens: int, indexed: bool) -> LoreEntry:
    fields = same_named(record, LoreEntry) | {"lore": sent_lore(record)}
    return LoreEntry(**fields, tokens=tokens, indexed=indexed)


def _lore_book(book: BookRecord, entries: tuple[LoreEntry, ...]) -> LoreBook:
    return LoreBook(
        id=book.id,
        title=book.title,
        entries=entries,
        version=str(book.version),  # the matcher depends on titles/aliases only
        readers=reader_languages(book.settings),
    )
