"""Shared plumbing of the store modules: the engine, row → record conversion, book locking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.engine import create_engine, is_postgres
from worldbook.core.drafts import ENTRY_LIST_FIELDS
from worldbook.core.records import BookRecord, EntryRecord, now, utc
from worldbook.core.types import BookMode, IndexStatus, Visibility
from worldbook.errors import BookNotFound, InvalidInput


def check_ids(ids: Sequence[str], *, field: str = "ids") -> list[str]:
    """Deduplicate ids keeping first occurrence; reject non-text."""
    if isinstance(ids, str) or not all(isinstance(i, str) for i in ids):
        raise InvalidInput(f"{field} must be a list of entry ids.", field=field)
    return list(dict.fromkeys(ids))


def book_record(row: Mapping[Any, Any]) -> BookRecord:
    return BookRecord(
        id=row["id"],
        owner_id=row["owner_id"],
        title=row["title"],
        description=row["description"],
        tags=tuple(row["tags"]),
        visibility=Visibility(row["visibility"]),
        mode=BookMode(row["mode"]),
        settings=dict(row["settings"]),
        extensions=dict(row["extensions"]),
        created_at=utc(row["created_at"]),  # type: ignore[arg-type]
        updated_at=utc(row["updated_at"]),  # type: ignore[arg-type]
        deleted_at=utc(row["deleted_at"]),
        version=row["version"],
        index_version=row["index_version"],
        entry_count=row["entry_count"],
    )


def entry_record(row: Mapping[Any, Any]) -> EntryRecord:
    values = {c.name: row[c.name] for c in t.entries.columns}
    for name in ENTRY_LIST_FIELDS:
        values[name] = tuple(values[name])
    values["extensions"] = dict(values["extensions"])
    values["index_status"] = IndexStatus(values["index_status"])
    values["created_at"] = utc(values["created_at"])
    values["updated_at"] = utc(values["updated_at"])
    values["index_status_at"] = utc(values["index_status_at"])
    return EntryRecord(**values)


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
