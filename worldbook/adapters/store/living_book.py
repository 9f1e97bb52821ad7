"""The SQL side of the living world: one locked book as :class:`~worldbook.core.living_ops.
LivingBook` sees it, plus row ↔ record conversion for the write log and the entry trash."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import entry_record, record_of
from worldbook.adapters.store.books import _zero_usage
from worldbook.adapters.store.entries import _draft_values
from worldbook.core.drafts import EntryDraft, entry_values
from worldbook.core.embed_text import entry_content_hash
from worldbook.core.living import (
    LivingState,
    NamedEntry,
    TrashedEntry,
    UndoReason,
    WindowCounts,
    WriteRecord,
    state_of,
)
from worldbook.core.records import BookRecord, EntryRecord, now, utc
from worldbook.core.store_rules import new_id
from worldbook.core.types import IndexStatus

if TYPE_CHECKING:
    from worldbook.adapters.store.entries import EntriesMixin

W = t.lore_writes.c


def write_record(row: Mapping[Any, Any]) -> WriteRecord:
    values = {c.name: row[c.name] for c in t.lore_writes.columns}
    for name in ("created_at", "undone_at", "edited_at"):
        values[name] = utc(values[name])
    return WriteRecord(**values)


def trashed_record(row: Mapping[Any, Any]) -> TrashedEntry:
    return record_of(TrashedEntry, row, draft=EntryDraft(**dict(row["draft"])))


def living_of(row: Mapping[Any, Any]) -> LivingState:
    return LivingState(
        row["entry_id"], row["book_id"], row["base"], row["lore_sha"], row["fields_sha"]
    )


def with_states(conn: sa.Connection, writes: Sequence[WriteRecord]) -> list[WriteRecord]:
    """The writes with their states as of now (two reads for the whole page)."""
    ids = list({w.entry_id for w in writes})
    entries: dict[str, EntryRecord] = {}
    living: dict[str, LivingState] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = conn.execute(sa.select(t.entries).where(t.entries.c.id.in_(chunk))).mappings()
        entries.update((r["id"], entry_record(r)) for r in rows)
        states = conn.execute(
            sa.select(t.living_entries).where(t.living_entries.c.entry_id.in_(chunk))
        ).mappings()
        living.update((r["entry_id"], living_of(r)) for r in states)
    out = []
    for write in writes:
        entry = entries.get(write.entry_id)
        if entry is not None and entry.book_id != write.book_id:
            entry = None
        out.append(replace(write, state=state_of(write, entry, living.get(write.entry_id))))
    return out


class SqlLivingBook:
    """:class:`~worldbook.core.living_ops.LivingBook` over one connection whose transaction
    holds the book's lock (taken by the caller)."""

    def __init__(self, store: EntriesMixin, conn: sa.Connection, book: BookRecord) -> None:
        self._store = store
        self._conn = conn
        self._book = book

    @property
    def book(self) -> BookRecord:
        return self._book

    def find_call(self, call_key: str) -> WriteRecord | None:
        row = (
            self._conn.execute(
                sa.select(t.lore_writes).where(W.book_id == self._book.id, W.call_key == call_key)
            )
            .mappings()
            .first()
        )
        return None if row is None else write_record(row)

    def write(self, write_id: str) -> WriteRecord | None:
        row = self._conn.execute(sa.select(t.lore_writes).where(W.id == write_id)).mappings()
        found = row.first()
        return None if found is None else write_record(found)

    def window_counts(self, since: datetime) -> WindowCounts:
        recent = (W.book_id == self._book.id) & (W.created_at > since)
        live = recent & W.undone_at.is_(None) & (W.effect != "unchanged")
        attempts, first_attempt = self._conn.execute(
            sa.select(sa.func.count(), sa.func.min(W.created_at)).where(recent)
        ).one()
        lives, first_live = self._conn.execute(
            sa.select(sa.func.count(), sa.func.min(W.created_at)).where(live)
        ).one()
        return WindowCounts(int(attempts), utc(first_attempt), int(lives), utc(first_live))

    def names(self) -> list[NamedEntry]:
        e = t.entries.c
        rows = self._conn.execute(
            sa.select(e.id, e.title, e.aliases, e.enabled)
            .where(e.book_id == self._book.id)
            .order_by(e.position, e.id)
        )
        return [NamedEntry(r[0], r[1], tuple(r[2]), bool(r[3])) for r in rows]

    def entry(self, entry_id: str) -> EntryRecord | None:
        row = (
            self._conn.execute(
                sa.select(t.entries).where(
                    t.entries.c.id == entry_id, t.entries.c.book_id == self._book.id
                )
            )
            .mappings()
            .first()
        )
        return None if row is None else entry_record(row)

    def living(self, entry_id: str) -> LivingState | None:
        row = (
            self._conn.execute(
                sa.select(t.living_entries).where(t.living_entries.c.entry_id == entry_id)
            )
            .mappings()
            .first()
        )
        return None if row is None else living_of(row)

    def put_living(self, state: LivingState) -> None:
        table = t.living_entries
        self._conn.execute(sa.delete(table).where(table.c.entry_id == state.entry_id))
        self._conn.execute(
            sa.insert(table).values(
                entry_id=state.entry_id,
                book_id=state.book_id,
                base=state.base,
                lore_sha=state.lore_sha,
                fields_sha=state.fields_sha,
            )
        )

    def live_writes(self, entry_id: str) -> list[WriteRecord]:
        rows = self._conn.execute(
            sa.select(t.lore_writes)
            .where(
                W.book_id == self._book.id,
                W.entry_id == entry_id,
                W.undone_at.is_(None),
                W.edited_at.is_(None),
            )
            .order_by(W.seq)
        ).mappings()
        return [write_record(r) for r in rows]

    def add_entry(self, draft: EntryDraft) -> EntryRecord:
        entry_id = new_id()
        book_id = self._book.id
        positions = self._store._new_positions(self._conn, book_id, [entry_id], "last", new=True)
        stamp = now()
        values = _draft_values(draft)
        values.update(
            id=entry_id,
            book_id=book_id,
            position=positions.pop(entry_id),
            index_status=IndexStatus.QUEUED.value,
            index_status_at=stamp,
            index_error=None,
            created_at=stamp,
            updated_at=stamp,
        )
        self._conn.execute(sa.insert(t.entries).values(**values))
        self._conn.execute(sa.insert(t.entry_usage).values(**_zero_usage(entry_id)))
        self._store._write_positions(self._conn, positions)
        self._store._touch_book(self._conn, book_id, entry_count=t.books.c.entry_count + 1)
        self._book = replace(self._book, entry_count=self._book.entry_count + 1)
        found = self.entry(entry_id)
        assert found is not None
        return found

    def set_lore(self, entry_id: str, lore: str) -> EntryRecord:
        entry = self.entry(entry_id)
        assert entry is not None
        stamp = now()
        self._conn.execute(
            sa.update(t.entries)
            .where(t.entries.c.id == entry_id)
            .values(
                lore=lore,
                content_hash=entry_content_hash(entry.title, entry.aliases, lore),
                index_status=IndexStatus.QUEUED.value,
                index_error=None,
                index_status_at=stamp,
                updated_at=stamp,
            )
        )
        self._store._touch_book(self._conn, self._book.id)
        updated = self.entry(entry_id)
        assert updated is not None
        return updated

    def add_write(self, write: WriteRecord) -> WriteRecord:
        values = {c.name: getattr(write, c.name) for c in t.lore_writes.columns}
        del values["seq"]
        result = self._conn.execute(sa.insert(t.lore_writes).values(**values))
        key = result.inserted_primary_key
        assert key is not None
        return replace(write, seq=int(key[0]))

    def mark_edited(self, write_ids: Sequence[str], at: datetime) -> None:
        self._set_on_writes(write_ids, edited_at=at)

    def mark_undone(self, write_ids: Sequence[str], at: datetime, reason: UndoReason) -> None:
        self._set_on_writes(write_ids, undone_at=at, undo_reason=reason)

    def _set_on_writes(self, write_ids: Sequence[str], **values: object) -> None:
        if write_ids:
            self._conn.execute(sa.update(t.lore_writes).where(W.id.in_(write_ids)).values(values))

    def trash_entry(self, entry: EntryRecord, lore: str, at: datetime, write_id: str) -> None:
        draft = entry.to_draft()
        draft.lore = lore
        values = {k: list(v) if isinstance(v, tuple) else v for k, v in entry_values(draft).items()}
        self._conn.execute(
            sa.insert(t.entry_trash).values(
                entry_id=entry.id,
                book_id=entry.book_id,
                position=entry.position,
                draft=values,
                created_at=entry.created_at,
                trashed_at=at,
                write_id=write_id,
            )
        )
        for table in (t.living_entries, t.entry_vectors, t.entry_usage):
            self._conn.execute(sa.delete(table).where(table.c.entry_id == entry.id))
        self._conn.execute(sa.delete(t.entries).where(t.entries.c.id == entry.id))
        self._store._touch_book(self._conn, entry.book_id, entry_count=t.books.c.entry_count - 1)
        self._book = replace(self._book, entry_count=self._book.entry_count - 1)
