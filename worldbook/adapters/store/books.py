"""Users, API keys, books (with trash and copy) and attachments."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import (
    StoreBase,
    book_record,
)
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core import limits
from worldbook.core.drafts import BOOK_FIELDS, BookDraft, check_known_fields, norm_tag
from worldbook.core.limits import check_page
from worldbook.core.ordering import GAP
from worldbook.core.records import (
    BookQuery,
    BookRecord,
    now,
)
from worldbook.core.store_rules import changed_book, check_user_id, new_book_record, new_id
from worldbook.core.types import BookMode, Visibility
from worldbook.errors import BookNotFound


class BooksMixin(StoreBase):
    # --- books -----------------------------------------------------------------------------

    def create_book(self, owner_id: str, draft: BookDraft) -> BookRecord:
        """A new empty book (public needs entries, so a new book cannot start public)."""
        check_user_id(owner_id, field="owner_id")
        limits.validate_book_draft(draft, field="book")
        if draft.visibility == Visibility.PUBLIC:
            limits.check_publish(0, field="book.visibility")
        book_id = new_id()
        with write_tx(self._engine) as conn:
            self._ensure_user(conn, owner_id)
            self._insert_book(conn, book_id, owner_id, draft, entry_count=0)
            return self._lock_book(conn, book_id)

    def _insert_book(
        self,
        conn: sa.Connection,
        book_id: str,
        owner_id: str,
        draft: BookDraft,
        *,
        entry_count: int,
    ) -> None:
        """The book row, its tag rows and its usage row (inside the caller's transaction)."""
        book = new_book_record(book_id, owner_id, draft, at=now(), entry_count=entry_count)
        conn.execute(sa.insert(t.books).values({**asdict(book), "tags": list(book.tags)}))
        self._write_tags(conn, book_id, draft.tags)
        conn.execute(sa.insert(t.book_usage).values(book_id=book_id, turns=0))

    def _write_tags(self, conn: sa.Connection, book_id: str, tags: list[str]) -> None:
        conn.execute(sa.delete(t.book_tags).where(t.book_tags.c.book_id == book_id))
        rows = [{"book_id": book_id, "tag": tag} for tag in dict.fromkeys(map(norm_tag, tags))]
        if rows:
            conn.execute(sa.insert(t.book_tags), rows)

    def get_book(self, book_id: str, *, include_trashed: bool = False) -> BookRecord:
        with read_tx(self._engine) as conn:
            row = conn.execute(sa.select(t.books).where(t.books.c.id == book_id)).mappings()
            found = row.first()
        if found is None or (found["deleted_at"] is not None and not include_trashed):
            raise BookNotFound.for_id(book_id)
        return book_record(found)

    def update_book(self, book_id: str, **changes: Any) -> BookRecord:
        """Change book fields (any of :class:`BookDraft`'s); publishing needs 10 entries."""
        check_known_fields(changes, BOOK_FIELDS, kind="book")
        with write_tx(self._engine) as conn:
            book = self._lock_book(conn, book_id)
            draft = changed_book(book, changes)
            if draft.mode != BookMode.CLASSIC and book.mode == BookMode.CLASSIC:
                self._check_world_lore(conn, book_id)
            values = {name: getattr(draft, name) for name in changes}
            for name in ("visibility", "mode"):
                if name in values:
                    values[name] = str(values[name])
            self._touch_book(conn, book_id, **values)
            if "tags" in changes:
                self._write_tags(conn, book_id, draft.tags)
            return self._lock_book(conn, book_id)

    def _check_world_lore(self, conn: sa.Connection, book_id: str) -> None:
        """Leaving classic mode (world, hybrid): every entry must meet the world lore minimum."""
        rows = conn.execute(
            sa.select(t.entries.c.id, t.entries.c.lore)
            .where(t.entries.c.book_id == book_id)
            .order_by(t.entries.c.position, t.entries.c.id)
        )
        limits.check_world_mode_lore((entry_id, lore) for entry_id, lore in rows)

    def trash_book(self, book_id: str) -> BookRecord:
        """Soft-delete: the book disappears from lists and turns until restored."""
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            self._touch_book(conn, book_id, deleted_at=now())
            return self._lock_book(conn, book_id, include_trashed=True)

    def restore_book(self, book_id: str) -> BookRecord:
        with write_tx(self._engine) as conn:
            book = self._lock_book(conn, book_id, include_trashed=True)
            if book.deleted_at is not None:
                self._touch_book(conn, book_id, deleted_at=None)
            return self._lock_book(conn, book_id)

    def purge_book(self, book_id: str) -> None:
        """Delete a book and everything hanging off it, for good."""
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id, include_trashed=True)
            entry_ids = sa.select(t.entries.c.id).where(t.entries.c.book_id == book_id)
            for table in (t.entry_vectors, t.entry_usage):
                conn.execute(sa.delete(table).where(table.c.entry_id.in_(entry_ids)))
            # book_usage_days after book_usage: the usage writer holds book_usage's row while
            # it adds a day, so its day row is committed (and deleted here) or never written.
            tables = (t.entries, t.book_tags, t.book_usage, t.book_usage_days, t.attachments)
            for table in (*tables, t.import_jobs, t.chat_state):
                conn.execute(sa.delete(table).where(table.c.book_id == book_id))
            conn.execute(sa.delete(t.books).where(t.books.c.id == book_id))

    def list_books(self, query: BookQuery) -> list[BookRecord]:
        """Books matching every given filter, most recently updated first."""
        check_page(query.limit, query.offset)
        b = t.books.c
        stmt = sa.select(t.books).where(
            b.deleted_at.is_not(None) if query.trashed else b.deleted_at.is_(None)
        )
        if query.owner_id is not None:
            stmt = stmt.where(b.owner_id == query.owner_id)
        if query.visibility is not None:
            stmt = stmt.where(b.visibility == Visibility(query.visibility).value)
        if query.title_contains:
            text = query.title_contains
            escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            stmt = stmt.where(b.title.ilike(f"%{escaped}%", escape="\\"))
        if query.tag:
            tag = norm_tag(query.tag)
            stmt = stmt.where(
                b.id.in_(sa.select(t.book_tags.c.book_id).where(t.book_tags.c.tag == tag))
            )
        stmt = stmt.order_by(b.updated_at.desc(), b.id).limit(query.limit).offset(query.offset)
        with read_tx(self._engine) as conn:
            return [book_record(r) for r in conn.execute(stmt).mappings()]

    def copy_book(self, book_id: str, new_owner_id: str) -> BookRecord:
        """A private copy for ``new_owner_id``: same fields, entries in order, vectors reused."""
        check_user_id(new_owner_id, field="new_owner_id")
        stamp = now()
        new_book = new_id()
        with write_tx(self._engine) as conn:
            source = self._lock_book(conn, book_id)
            self._ensure_user(conn, new_owner_id)
            draft = source.to_draft()
            draft.visibility = Visibility.PRIVATE
            self._insert_book(conn, new_book, new_owner_id, draft, entry_count=source.entry_count)
            rows = conn.execute(
                sa.select(t.entries)
                .where(t.entries.c.book_id == book_id)
                .order_by(t.entries.c.position, t.entries.c.id)
            ).mappings()
            id_map: dict[str, str] = {}
            copies = []
            for i, row in enumerate(rows):
                id_map[row["id"]] = new_id()
                copy = dict(row)
                copy.update(
                    id=id_map[row["id"]],
                    book_id=new_book,
                    position=GAP * (i + 1),
                    created_at=stamp,
                    updated_at=stamp,
                )
                copies.append(copy)
            if copies:
                conn.execute(sa.insert(t.entries), copies)
                conn.execute(
                    sa.insert(t.entry_usage),
                    [_zero_usage(c["id"]) for c in copies],
                )
                vectors = conn.execute(
                    sa.select(t.entry_vectors).where(t.entry_vectors.c.entry_id.in_(list(id_map)))
                ).mappings()
                vector_rows = [dict(v, entry_id=id_map[v["entry_id"]]) for v in vectors]
                if vector_rows:
                    conn.execute(sa.insert(t.entry_vectors), vector_rows)
            return self._lock_book(conn, new_book)


def _zero_usage(entry_id: str) -> dict[str, Any]:
    return {
        "entry_id": entry_id,
        "total": 0,
        "canon": 0,
        "whole_book": 0,
        "full": 0,
        "index": 0,
        "last_used_at": None,
    }
