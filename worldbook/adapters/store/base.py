"""Shared plumbing of the store modules: the engine, row → record conversion, book locking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.engine import create_engine, is_postgres
from worldbook.core.drafts import ENTRY_LIST_FIELDS
from worldbook.core.records import BookRecord, EntryRecord, now, utc
from worldbook.core.types import BookMode, IndexStatus, Visibility
from worldbook.errors import BookNotFound, InvalidInput

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R", bound="DataclassInstance")


def check_ids(ids: Sequence[str], *, field: str = "ids") -> list[str]:
    """Deduplicate ids keeping first occurrence; reject non-text."""
    if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
        raise InvalidInput(f"{field} must be a list of entry ids.", field=field)
    return list(dict.fromkeys(ids))


def record_of(record: type[R], row: Mapping[Any, Any], /, **converted: Any) -> R:
    """The ``record`` dataclass from the row's columns of the same names, with ``converted``
    for the fields that need more than a copy. Datetimes come back aware UTC (:func:`utc`)."""
    values = {f.name: row[f.name] for f in fields(record) if f.name not in converted}
    for name, value in values.items():
        if isinstance(value, datetime):
            values[name] = utc(value)
    return record(**values, **converted)


def book_record(row: Mapping[Any, Any]) -> BookRecord:
    return record_of(
        BookRecord,
        row,
        tags=tuple(row["tags"]),
        visibility=Visibility(row["visibility"]),
        mode=BookMode(row["mode"]),
        settings=dict(row["settings"]),
        extensions=dict(row["extensions"]),
    )


def entry_record(row: Mapping[Any, Any]) -> EntryRecord:
    lists = {name: tuple(row[name]) for name in ENTRY_LIST_FIELDS}
    status = IndexStatus(row["index_status"])
    return record_of(
        EntryRecord, row, **lists, extensions=dict(row["extensions"]), index_status=status
    )


class StoreBase:
    """Holds the engine; the feature mixins build on these helpers."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = create_engine(url)
        self._pg = is_postgres(self._engine)

    def close(self) -> None:
        """Release pooled connections."""
        self._engine.dispose()

    def _lock_book(
        self, conn: sa.Connection, book_id: str, *, include_trashed: bool = False
    ) -> BookRecord:
        """Load a book row under a write lock (FOR UPDATE on PostgreSQL; see engine.py).

        Every write that touches a book or its entries goes through here first, so concurrent
        writers to one book are serialised and ``entry_count``/positions stay exact.
        """
        query = sa.select(t.books).where(t.books.c.id == book_id).with_for_update()
        row = conn.execute(query).mappings().first()
        if row is None or (row["deleted_at"] is not None and not include_trashed):
            raise BookNotFound.for_id(book_id)
        return book_record(row)

    def _touch_book(self, conn: sa.Connection, book_id: str, **values: Any) -> None:
        """Bump the book's version (caches key on it) with any other column changes."""
        conn.execute(
            sa.update(t.books)
            .where(t.books.c.id == book_id)
            .values(version=t.books.c.version + 1, updated_at=now(), **values)
        )

    def _insert_ignore(
        self, conn: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]
    ) -> None:
        """INSERT … ON CONFLICT DO NOTHING, in the dialect at hand (race-free upsert of keys)."""
        if not rows:
            return
        insert = pg_insert if self._pg else sqlite_insert
        conn.execute(insert(table).on_conflict_do_nothing(), rows)

    def _ensure_user(self, conn: sa.Connection, user_id: str) -> None:
        self._insert_ignore(conn, t.users, [{"id": user_id, "created_at": now()}])
