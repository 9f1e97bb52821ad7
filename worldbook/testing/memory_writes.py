"""The living world of the in-memory store: writes, undo, the write log and the entry trash.

The rules are :mod:`worldbook.core.living_ops`, the same functions the SQL store runs; here
they read and write the store's dictionaries through :class:`MemoryLivingBook`. A write or
undo that fails part-way leaves nothing behind: the touched state is copied first and put
back on any error, as a rolled-back transaction would.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime
from typing import Any

from worldbook.core import limits
from worldbook.core.drafts import EntryDraft
from worldbook.core.embed_text import entry_content_hash
from worldbook.core.limits import check_page
from worldbook.core.living import (
    LivingLimits,
    LivingState,
    NamedEntry,
    TrashedEntry,
    UndoOutcome,
    UndoReason,
    WindowCounts,
    WriteCall,
    WriteOutcome,
    WriteRecord,
    state_of,
)
from worldbook.core.living_ops import apply_write, undo
from worldbook.core.records import BookRecord, EntryRecord, EntryUsageRecord, now
from worldbook.core.store_rules import new_id
from worldbook.core.types import IndexStatus
from worldbook.errors import WriteNotFound
from worldbook.testing.memory_entries import EntryTable, _entry_from_draft


class WriteTable(EntryTable):
    """The living-world side of :class:`~worldbook.testing.memory_store.InMemoryStore`."""

    def __init__(self) -> None:
        super().__init__()
        self._writes: list[WriteRecord] = []
        self._living: dict[str, LivingState] = {}
        self._trash: dict[str, TrashedEntry] = {}
        self._write_seq = 0

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """Put everything a living write may touch back as it was if the block raises."""
        with self._lock:
            saved = (
                dict(self._books),
                dict(self._entries),
                dict(self._entry_usage),
                dict(self._vectors),
                dict(self._glosses),
                list(self._writes),
                dict(self._living),
                dict(self._trash),
            )
            try:
                yield
            except BaseException:
                (
                    self._books,
                    self._entries,
                    self._entry_usage,
                    self._vectors,
                    self._glosses,
                    self._writes,
                    self._living,
                    self._trash,
                ) = saved
                raise

    def record_write(
        self, call: WriteCall, *, limits: LivingLimits, at: datetime | None = None
    ) -> WriteOutcome:
        with self._transaction():
            view = MemoryLivingBook(self, self._live_book(call.book_id))
            return apply_write(view, call, at=at or now(), limits=limits, new_id=new_id)

    def _write_by_id(self, write_id: str) -> WriteRecord:
        for write in self._writes:
            if write.id == write_id:
                return write
        raise WriteNotFound.for_id(write_id)

    def _with_state(self, write: WriteRecord) -> WriteRecord:
        entry = self._entries.get(write.entry_id)
        if entry is not None and entry.book_id != write.book_id:
            entry = None
        return replace(write, state=state_of(write, entry, self._living.get(write.entry_id)))

    def get_write(self, write_id: str) -> WriteRecord:
        with self._lock:
            return self._with_state(self._write_by_id(write_id))

    def undo_write(
        self, write_id: str, *, reason: UndoReason = "undo", at: datetime | None = None
    ) -> UndoOutcome:
        with self._transaction():
            write = self._write_by_id(write_id)
            view = MemoryLivingBook(self, self._live_book(write.book_id))
            return undo(view, write, at=at or now(), reason=reason)

    def list_writes(self, book_id: str, *, limit: int = 50, offset: int = 0) -> list[WriteRecord]:
        check_page(limit, offset)
        with self._lock:
            found = [w for w in reversed(self._writes) if w.book_id == book_id]
            return [self._with_state(w) for w in found[offset : offset + limit]]

    def message_writes(
        self, owner_id: str, chat_id: str, message_id: str, swipe: int | None = None
    ) -> list[WriteRecord]:
        with self._lock:
            return [
                self._with_state(w)
                for w in reversed(self._writes)
                if w.book_id in self._books
                and self._books[w.book_id].owner_id == owner_id
                and w.chat_id == chat_id
                and w.message_id == message_id
                and (swipe is None or w.swipe == swipe)
            ]

    def list_entry_trash(self, book_id: str) -> list[TrashedEntry]:
        with self._lock:
            found = [e for e in self._trash.values() if e.book_id == book_id]
        return sorted(found, key=lambda e: (-e.trashed_at.timestamp(), e.entry_id))

    def get_trashed_entry(self, entry_id: str) -> TrashedEntry:
        return self._entry_in(self._trash, entry_id)

    def restore_entry(self, entry_id: str) -> EntryRecord:
        with self._lock:
            trashed = self.get_trashed_entry(entry_id)
            book = self._live_book(trashed.book_id)
            limits.validate_entry_draft(trashed.draft, field="entry", mode=book.mode)
            limits.check_entries_per_book(book.entry_count, 1)
            taken = any(e.position == trashed.position for e in self._book_entries(book.id))
            position = trashed.position
            if taken:
                positions = self._positions(book.id, [entry_id], "last")
                position = positions.pop(entry_id)
                self._write_positions(positions)
            record = _entry_from_draft(trashed.draft, entry_id, book.id, position, now())
            self._entries[entry_id] = replace(record, created_at=trashed.created_at)
            self._entry_usage[entry_id] = EntryUsageRecord(entry_id=entry_id)
            del self._trash[entry_id]
            self._count_entries(book.id, 1)
            self._touch(book.id)
            return self._entries[entry_id]

    # --- hooks into the entry and book tables ----------------------------------------------

    def _drop_entries(self, ids: Sequence[str]) -> None:
        super()._drop_entries(ids)
        for entry_id in ids:  # as the SQL foreign key's ON DELETE CASCADE
            self._living.pop(entry_id, None)

    def purge_book(self, book_id: str) -> None:
        with self._lock:
            super().purge_book(book_id)
            self._writes = [w for w in self._writes if w.book_id != book_id]
            self._living = {k: s for k, s in self._living.items() if s.book_id != book_id}
            self._trash = {k: e for k, e in self._trash.items() if e.book_id != book_id}


class MemoryLivingBook:
    """:class:`~worldbook.core.living_ops.LivingBook` over the in-memory store (its lock is
    held by the caller)."""

    def __init__(self, store: WriteTable, book: BookRecord) -> None:
        self._s = store
        self._book_id = book.id

    @property
    def book(self) -> BookRecord:
        return self._s._books[self._book_id]

    def _mine(self) -> list[WriteRecord]:
        return [w for w in self._s._writes if w.book_id == self._book_id]

    def find_call(self, call_key: str) -> WriteRecord | None:
        return next((w for w in self._mine() if w.call_key == call_key), None)

    def window_counts(self, since: datetime) -> WindowCounts:
        recent = [w for w in self._mine() if w.created_at > since]
        live = [w for w in recent if w.undone_at is None and w.effect != "unchanged"]
        first = min((w.created_at for w in recent), default=None)
        first_live = min((w.created_at for w in live), default=None)
        return WindowCounts(len(recent), first, len(live), first_live)

    def names(self) -> list[NamedEntry]:
        entries = self._s._book_entries(self._book_id)
        return [NamedEntry(e.id, e.title, e.aliases, e.enabled) for e in entries]

    def entry(self, entry_id: str) -> EntryRecord | None:
        found = self._s._entries.get(entry_id)
        return found if found is not None and found.book_id == self._book_id else None

    def living(self, entry_id: str) -> LivingState | None:
        return self._s._living.get(entry_id)

    def put_living(self, state: LivingState) -> None:
        self._s._living[state.entry_id] = state

    def live_writes(self, entry_id: str) -> list[WriteRecord]:
        return [
            w
            for w in self._mine()
            if w.entry_id == entry_id and w.undone_at is None and w.edited_at is None
        ]

    def add_entry(self, draft: EntryDraft) -> EntryRecord:
        entry_id = new_id()
        positions = self._s._positions(self._book_id, [entry_id], "last")
        record = _entry_from_draft(draft, entry_id, self._book_id, positions.pop(entry_id), now())
        self._s._entries[entry_id] = record
        self._s._entry_usage[entry_id] = EntryUsageRecord(entry_id=entry_id)
        self._s._write_positions(positions)
        self._s._count_entries(self._book_id, 1)
        self._s._touch(self._book_id)
        return record

    def set_lore(self, entry_id: str, lore: str) -> EntryRecord:
        entry = self._s._entries[entry_id]
        stamp = now()
        updated = replace(
            entry,
            lore=lore,
            content_hash=entry_content_hash(entry.title, entry.aliases, lore),
            index_status=IndexStatus.QUEUED,
            index_error=None,
            index_status_at=stamp,
            updated_at=stamp,
        )
        self._s._entries[entry_id] = updated
        self._s._touch(self._book_id)
        return updated

    def add_write(self, write: WriteRecord) -> WriteRecord:
        self._s._write_seq += 1
        stored = replace(write, seq=self._s._write_seq)
        self._s._writes.append(stored)
        return stored

    def mark_edited(self, write_ids: Sequence[str], at: datetime) -> None:
        self._replace_writes(set(write_ids), edited_at=at)

    def mark_undone(self, write_ids: Sequence[str], at: datetime, reason: UndoReason) -> None:
        self._replace_writes(set(write_ids), undone_at=at, undo_reason=reason)

    def _replace_writes(self, wanted: set[str], **changes: Any) -> None:
        writes = self._s._writes
        writes[:] = [replace(w, **changes) if w.id in wanted else w for w in writes]

    def trash_entry(self, entry: EntryRecord, lore: str, at: datetime, write_id: str) -> None:
        draft = entry.to_draft()
        draft.lore = lore
        self._s._trash[entry.id] = TrashedEntry(
            entry.id, entry.book_id, draft, entry.position, entry.created_at, at, write_id
        )
        self._s._drop_entries([entry.id])
        self._s._count_entries(self._book_id, -1)
        self._s._touch(self._book_id)
