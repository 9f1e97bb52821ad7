"""The living world in the SQL store: writes, undo, the write log and the entry trash.

Every write and undo runs in one transaction that first locks the book row
(:meth:`StoreBase._lock_book`: ``FOR UPDATE`` on PostgreSQL, the writer lock on SQLite), so
the rate counts, the replay check and the entry's lore are read and changed by one writer at a
time: no write is lost and none is counted twice (ADR 0006). The rules themselves
are :mod:`worldbook.core.living_ops`, shared with the in-memory store.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.books import _zero_usage
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.adapters.store.entries import EntriesMixin, _draft_values
from worldbook.adapters.store.living_book import (
    SqlLivingBook,
    W,
    trashed_record,
    with_states,
    write_record,
)
from worldbook.core import limits
from worldbook.core.limits import check_page
from worldbook.core.living import (
    LivingLimits,
    TrashedEntry,
    UndoOutcome,
    UndoReason,
    WriteCall,
    WriteOutcome,
    WriteRecord,
)
from worldbook.core.living_ops import apply_write, undo
from worldbook.core.records import EntryRecord, now
from worldbook.core.store_rules import new_id
from worldbook.core.types import IndexStatus
from worldbook.errors import EntryNotFound, WriteNotFound


class WritesMixin(EntriesMixin):
    def record_write(
        self, call: WriteCall, *, limits: LivingLimits, at: datetime | None = None
    ) -> WriteOutcome:
        """Apply one living-world tool call (or answer its replay) under the book's lock."""
        with write_tx(self._engine) as conn:
            book = self._lock_book(conn, call.book_id)
            view = SqlLivingBook(self, conn, book)
            return apply_write(view, call, at=at or now(), limits=limits, new_id=new_id)

    def get_write(self, write_id: str) -> WriteRecord:
        with read_tx(self._engine) as conn:
            row = conn.execute(sa.select(t.lore_writes).where(W.id == write_id)).mappings()
            found = row.first()
            if found is None:
                raise WriteNotFound.for_id(write_id)
            return with_states(conn, [write_record(found)])[0]

    def undo_write(
        self, write_id: str, *, reason: UndoReason = "undo", at: datetime | None = None
    ) -> UndoOutcome:
        """Undo one write (idempotent); ``Conflict`` when a person edited its entry since."""
        with write_tx(self._engine) as conn:
            book_id = conn.execute(sa.select(W.book_id).where(W.id == write_id)).scalar()
            if book_id is None:
                raise WriteNotFound.for_id(write_id)
            view = SqlLivingBook(self, conn, self._lock_book(conn, book_id))
            write = view.write(write_id)
            assert write is not None
            return undo(view, write, at=at or now(), reason=reason)

    def list_writes(self, book_id: str, *, limit: int = 50, offset: int = 0) -> list[WriteRecord]:
        """A book's write log, newest first, with each write's state now."""
        check_page(limit, offset)
        stmt = (
            sa.select(t.lore_writes)
            .where(W.book_id == book_id)
            .order_by(W.seq.desc())
            .limit(limit)
            .offset(offset)
        )
        with read_tx(self._engine) as conn:
            writes = [write_record(r) for r in conn.execute(stmt).mappings()]
            return with_states(conn, writes)

    def message_writes(
        self, owner_id: str, chat_id: str, message_id: str, swipe: int | None = None
    ) -> list[WriteRecord]:
        """The writes one chat message made to books ``owner_id`` owns, newest first."""
        stmt = (
            sa.select(t.lore_writes)
            .join(t.books, t.books.c.id == W.book_id)
            .where(t.books.c.owner_id == owner_id, W.chat_id == chat_id, W.message_id == message_id)
            .order_by(W.seq.desc())
        )
        if swipe is not None:
            stmt = stmt.where(W.swipe == swipe)
        with read_tx(self._engine) as conn:
            writes = [write_record(r) for r in conn.execute(stmt).mappings()]
            return with_states(conn, writes)

    def list_entry_trash(self, book_id: str) -> list[TrashedEntry]:
        """Entries in a book's trash, most recently trashed first."""
        e = t.entry_trash.c
        stmt = (
            sa.select(t.entry_trash)
            .where(e.book_id == book_id)
            .order_by(e.trashed_at.desc(), e.entry_id)
        )
        with read_tx(self._engine) as conn:
            return [trashed_record(r) for r in conn.execute(stmt).mappings()]

    def get_trashed_entry(self, entry_id: str) -> TrashedEntry:
        with read_tx(self._engine) as conn:
            return _trashed(conn, entry_id)

    def restore_entry(self, entry_id: str) -> EntryRecord:
        """Put a trashed entry back in its book: at its old place when that is free, else
        last; within the book's limits (its mode may have changed since)."""
        with write_tx(self._engine) as conn:
            trashed = _trashed(conn, entry_id)
            book = self._lock_book(conn, trashed.book_id)
            limits.validate_entry_draft(trashed.draft, field="entry", mode=book.mode)
            limits.check_entries_per_book(book.entry_count, 1)
            position = self._restored_position(conn, trashed)
            stamp = now()
            values = _draft_values(trashed.draft)
            values.update(
                id=entry_id,
                book_id=book.id,
                position=position,
                index_status=IndexStatus.QUEUED.value,
                index_status_at=stamp,
                index_error=None,
                created_at=trashed.created_at,
                updated_at=stamp,
            )
            conn.execute(sa.insert(t.entries).values(**values))
            conn.execute(sa.insert(t.entry_usage).values(**_zero_usage(entry_id)))
            conn.execute(sa.delete(t.entry_trash).where(t.entry_trash.c.entry_id == entry_id))
            self._touch_book(conn, book.id, entry_count=t.books.c.entry_count + 1)
            return self._entries_by_id(conn, [entry_id])[0]

    def _restored_position(self, conn: sa.Connection, trashed: TrashedEntry) -> int:
        e = t.entries.c
        taken = conn.execute(
            sa.select(e.id).where(e.book_id == trashed.book_id, e.position == trashed.position)
        ).first()
        if taken is None:
            return trashed.position
        positions = self._new_positions(conn, trashed.book_id, [trashed.entry_id], "last", new=True)
        position = positions.pop(trashed.entry_id)
        self._write_positions(conn, positions)
        return position


def _trashed(conn: sa.Connection, entry_id: str) -> TrashedEntry:
    """The trashed entry ``entry_id``, or EntryNotFound."""
    row = (
        conn.execute(sa.select(t.entry_trash).where(t.entry_trash.c.entry_id == entry_id))
        .mappings()
        .first()
    )
    if row is None:
        raise EntryNotFound.for_id(entry_id)
    return trashed_record(row)
