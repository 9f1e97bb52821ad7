"""Entries: batch add, edit, delete, list, enable/disable, and list order (sparse positions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import (
    StoreBase,
    check_ids,
    entry_record,
)
from worldbook.adapters.store.books import _zero_usage
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.adapters.store.usage import advance_job
from worldbook.core import limits
from worldbook.core.drafts import (
    ENTRY_FIELDS,
    ENTRY_LIST_FIELDS,
    EntryDraft,
    check_known_fields,
    entry_values,
)
from worldbook.core.embed_text import entry_content_hash
from worldbook.core.limits import check_entry_query
from worldbook.core.ordering import Target, gap_for, parse_target, spread_or_renumber
from worldbook.core.records import ALL_ENTRIES, EntryQuery, EntryRecord, EntryStamp, now
from worldbook.core.store_rules import new_id
from worldbook.core.types import IndexStatus
from worldbook.errors import EntryNotFound, InvalidInput

_CONTENT_FIELDS = ("title", "aliases", "lore")


def _draft_values(draft: EntryDraft) -> dict[str, Any]:
    """Column values of a draft (JSON columns take lists) with its content hash."""
    values = {k: list(v) if k in ENTRY_LIST_FIELDS else v for k, v in entry_values(draft).items()}
    values["content_hash"] = entry_content_hash(draft.title, draft.aliases, draft.lore)
    return values


class EntriesMixin(StoreBase):
    def add_entries(
        self,
        book_id: str,
        drafts: Sequence[EntryDraft],
        *,
        position: Target = "last",
        import_job_id: str | None = None,
    ) -> list[EntryRecord]:
        """Validate and add entries at ``position``, in the given order, in one transaction.

        Enforces the entries-per-book limit under the book-row lock (exact under concurrent
        inserts). With ``import_job_id`` the job's progress advances in the same transaction,
        so a resumed import never double-adds a batch.
        """
        target = parse_target(position)
        drafts = list(drafts)
        with write_tx(self._engine) as conn:
            book = self._lock_book(conn, book_id)
            limits.validate_entry_drafts(drafts, mode=book.mode)
            limits.check_entries_per_book(book.entry_count, len(drafts))
            if not drafts:
                return []
            ids = [new_id() for _ in drafts]
            positions = self._new_positions(conn, book_id, ids, target, new=True)
            stamp = now()
            rows = []
            for entry_id, draft in zip(ids, drafts, strict=True):
                values = _draft_values(draft)
                values.update(
                    id=entry_id,
                    book_id=book_id,
                    position=0,  # set from ``positions`` below
                    index_status=IndexStatus.QUEUED.value,
                    index_status_at=stamp,
                    index_error=None,
                    created_at=stamp,
                    updated_at=stamp,
                )
                rows.append(values)
            for row in rows:
                row["position"] = positions.pop(row["id"])
            conn.execute(sa.insert(t.entries), rows)
            conn.execute(sa.insert(t.entry_usage), [_zero_usage(i) for i in ids])
            if positions:  # a renumber touched existing rows too
                self._write_positions(conn, positions)
            self._touch_book(conn, book_id, entry_count=t.books.c.entry_count + len(ids))
            if import_job_id is not None:
                advance_job(conn, import_job_id, book_id, len(ids))
            return self._entries_by_id(conn, ids)

    def get_entry(self, entry_id: str) -> EntryRecord:
        with read_tx(self._engine) as conn:
            found = self._entries_by_id(conn, [entry_id])
        if not found:
            raise EntryNotFound.for_id(entry_id)
        return found[0]

    def entry_stamps(self, book_id: str) -> list[EntryStamp]:
        """(id, position, updated_at) of every entry of the book, in list order: three narrow
        columns, so a process can tell what changed since it built its view of the book."""
        c = t.entries.c
        # The time is compared, never computed with: read it as the driver gives it (SQLite's
        # text is not parsed into datetimes — that parsing was most of this query's cost).
        changed = sa.type_coerce(c.updated_at, sa.String())
        stmt = sa.select(c.id, c.position, changed).where(c.book_id == book_id)
        with read_tx(self._engine) as conn:
            rows = conn.execute(stmt.order_by(c.position, c.id)).all()
        return [EntryStamp(r[0], r[1], str(r[2])) for r in rows]

    def get_entries(self, book_id: str, ids: Sequence[str]) -> list[EntryRecord]:
        """Entries of this book among ``ids`` (others are silently left out), in list order."""
        with read_tx(self._engine) as conn:
            rows = conn.execute(
                sa.select(t.entries)
                .where(t.entries.c.book_id == book_id, t.entries.c.id.in_(check_ids(ids)))
                .order_by(t.entries.c.position, t.entries.c.id)
            ).mappings()
            return [entry_record(r) for r in rows]

    def update_entry(self, entry_id: str, **changes: Any) -> EntryRecord:
        """Change entry fields (any of :class:`EntryDraft`'s). A new text re-queues indexing."""
        check_known_fields(changes, ENTRY_FIELDS, kind="entry")
        with write_tx(self._engine) as conn:
            book_id = conn.execute(
                sa.select(t.entries.c.book_id).where(t.entries.c.id == entry_id)
            ).scalar()
            if book_id is None:
                raise EntryNotFound.for_id(entry_id)
            book = self._lock_book(conn, book_id)
            current = self._entries_by_id(conn, [entry_id])[0]
            draft = current.to_draft()
            for name, value in changes.items():
                setattr(draft, name, value)
            limits.validate_entry_draft(draft, field="entry", mode=book.mode)
            values = _draft_values(draft)
            values = {k: v for k, v in values.items() if k in changes or k == "content_hash"}
            if values["content_hash"] != current.content_hash:
                values.update(
                    index_status=IndexStatus.QUEUED.value, index_error=None, index_status_at=now()
                )
            conn.execute(
                sa.update(t.entries)
                .where(t.entries.c.id == entry_id)
                .values(updated_at=now(), **values)
            )
            self._touch_book(conn, book_id)
            return self._entries_by_id(conn, [entry_id])[0]

    def delete_entries(self, book_id: str, ids: Sequence[str]) -> int:
        """Delete entries of this book (all or nothing: a foreign id rejects the batch)."""
        ids = check_ids(ids)
        limits.check_bulk(len(ids))
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            self._require_in_book(conn, book_id, ids)
            for table in (t.entry_vectors, t.entry_usage):
                conn.execute(sa.delete(table).where(table.c.entry_id.in_(ids)))
            conn.execute(sa.delete(t.entries).where(t.entries.c.id.in_(ids)))
            self._touch_book(conn, book_id, entry_count=t.books.c.entry_count - len(ids))
            return len(ids)

    def list_entries(self, book_id: str, query: EntryQuery = ALL_ENTRIES) -> list[EntryRecord]:
        """A book's entries in list order (or most used first), filtered."""
        check_entry_query(query)
        e, u = t.entries.c, t.entry_usage.c
        stmt = sa.select(t.entries).join(t.entry_usage, u.entry_id == e.id)
        stmt = stmt.where(e.book_id == book_id)
        if query.canon is not None:
            stmt = stmt.where(e.canon == query.canon)
        if query.enabled is not None:
            stmt = stmt.where(e.enabled == query.enabled)
        if query.never_used is not None:
            stmt = stmt.where((u.total == 0) if query.never_used else (u.total > 0))
        if query.sort == "most_used":
            stmt = stmt.order_by(u.total.desc())
        stmt = stmt.order_by(e.position, e.id).offset(query.offset)
        if query.limit is not None:
            stmt = stmt.limit(query.limit)
        with read_tx(self._engine) as conn:
            return [entry_record(r) for r in conn.execute(stmt).mappings()]

    def set_enabled(self, book_id: str, ids: Sequence[str], enabled: bool) -> int:
        """Enable or disable entries of this book; returns how many changed."""
        ids = check_ids(ids)
        limits.check_bulk(len(ids))
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            self._require_in_book(conn, book_id, ids)
            result = conn.execute(
                sa.update(t.entries)
                .where(t.entries.c.id.in_(ids), t.entries.c.enabled != enabled)
                .values(enabled=enabled, updated_at=now())
            )
            if result.rowcount:
                self._touch_book(conn, book_id)
            return int(result.rowcount)

    def entry_ids_not_in_book(self, book_id: str, ids: Sequence[str]) -> list[str]:
        """The ids that are not entries of this book (callers refuse them: no IDOR)."""
        ids = check_ids(ids)
        with read_tx(self._engine) as conn:
            return self._foreign_ids(conn, book_id, ids)

    def move_entries(self, book_id: str, ids: Sequence[str], *, to: Target) -> int:
        """Move entries to first/last/before/after another; they keep their relative order.

        Returns how many rows got a new position (``len(ids)`` unless the book was renumbered).
        """
        ids = check_ids(ids)
        limits.check_bulk(len(ids))
        target = parse_target(to)
        if not isinstance(target, str) and target[1] in ids:
            raise InvalidInput("cannot move entries relative to one of themselves.", field="to")
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            self._require_in_book(conn, book_id, ids)
            positions = self._new_positions(conn, book_id, ids, target, new=False)
            self._write_positions(conn, positions)
            self._touch_book(conn, book_id)
            return len(positions)

    # --- helpers ---------------------------------------------------------------------------

    def _order(self, conn: sa.Connection, book_id: str) -> list[tuple[str, int]]:
        rows = conn.execute(
            sa.select(t.entries.c.id, t.entries.c.position)
            .where(t.entries.c.book_id == book_id)
            .order_by(t.entries.c.position, t.entries.c.id)
        )
        return [(row[0], row[1]) for row in rows]

    def _new_positions(
        self, conn: sa.Connection, book_id: str, ids: list[str], target: Target, *, new: bool
    ) -> dict[str, int]:
        """id → new position for ``ids`` at ``target`` (moved ids keep their list order).

        Reads only the moved rows and the two neighbours of the target gap; the whole book's
        order is read only when the gap is exhausted and the book is renumbered.
        """
        c = t.entries.c
        rest = c.book_id == book_id
        if not new:
            ids = list(
                conn.execute(
                    sa.select(c.id).where(rest, c.id.in_(ids)).order_by(c.position, c.id)
                ).scalars()
            )
            rest = rest & c.id.not_in(ids)
        lo, hi = gap_for(target, _SqlOrder(conn, rest))
        moving = set(ids)
        return spread_or_renumber(
            lo, hi, ids, lambda: [(e, p) for e, p in self._order(conn, book_id) if e not in moving]
        )

    def _write_positions(self, conn: sa.Connection, positions: dict[str, int]) -> None:
        if positions:
            stmt = (
                sa.update(t.entries)
                .where(t.entries.c.id == sa.bindparam("eid"))
                .values(position=sa.bindparam("pos"))
            )
            conn.execute(stmt, [{"eid": k, "pos": v} for k, v in positions.items()])

    def _foreign_ids(self, conn: sa.Connection, book_id: str, ids: list[str]) -> list[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found.update(
                conn.execute(
                    sa.select(t.entries.c.id).where(
                        t.entries.c.book_id == book_id, t.entries.c.id.in_(chunk)
                    )
                ).scalars()
            )
        return [i for i in ids if i not in found]

    def _require_in_book(self, conn: sa.Connection, book_id: str, ids: list[str]) -> None:
        foreign = self._foreign_ids(conn, book_id, ids)
        if foreign:
            raise EntryNotFound(
                f"entry {foreign[0]!r} is not in this book; nothing was changed.", field="ids"
            )

    def _entries_by_id(self, conn: sa.Connection, ids: list[str]) -> list[EntryRecord]:
        rows = conn.execute(
            sa.select(t.entries)
            .where(t.entries.c.id.in_(ids))
            .order_by(t.entries.c.position, t.entries.c.id)
        ).mappings()
        return [entry_record(r) for r in rows]


class _SqlOrder:
    """The :class:`~worldbook.core.ordering.OrderView` of one book's non-moving entries, read
    with one small query per question (min, max, one position, one neighbour)."""

    def __init__(self, conn: sa.Connection, rest: sa.ColumnElement[bool]) -> None:
        self._conn = conn
        self._rest = rest

    def _scalar(self, column: Any, *where: sa.ColumnElement[bool]) -> int | None:
        value = self._conn.execute(sa.select(column).where(self._rest, *where)).scalar()
        return None if value is None else int(value)

    def lowest(self) -> int | None:
        return self._scalar(sa.func.min(t.entries.c.position))

    def highest(self) -> int | None:
        return self._scalar(sa.func.max(t.entries.c.position))

    def position_of(self, entry_id: str) -> int | None:
        return self._scalar(t.entries.c.position, t.entries.c.id == entry_id)

    def below(self, position: int) -> int | None:
        return self._scalar(sa.func.max(t.entries.c.position), t.entries.c.position < position)

    def above(self, position: int) -> int | None:
        return self._scalar(sa.func.min(t.entries.c.position), t.entries.c.position > position)
