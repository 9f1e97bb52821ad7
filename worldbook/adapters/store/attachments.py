"""Attachments: books attached to a user's character, story or novel (scoped by that user)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase, record_of
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.records import AttachmentRecord, TargetKind, now
from worldbook.core.store_rules import check_target, check_user_id


class AttachmentsMixin(StoreBase):
    # --- attachments -----------------------------------------------------------------------

    def attach(
        self, book_id: str, target_kind: TargetKind, target_id: str, attached_by: str
    ) -> AttachmentRecord:
        """Attach a book to ``attached_by``'s character/story/novel, after the ones that user
        already attached there. Attaching the same book twice is a no-op that returns the
        existing attachment.
        """
        check_target(target_kind, target_id)
        check_user_id(attached_by, field="attached_by")
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            where = (
                (t.attachments.c.attached_by == attached_by)
                & (t.attachments.c.target_kind == target_kind)
                & (t.attachments.c.target_id == target_id)
            )
            existing = conn.execute(
                sa.select(t.attachments).where(where, t.attachments.c.book_id == book_id)
            ).mappings()
            found: Mapping[Any, Any] | None = existing.first()
            if found is None:
                last = conn.execute(sa.select(sa.func.max(t.attachments.c.position)).where(where))
                position = (last.scalar() or 0) + 1
                found = {
                    "target_kind": target_kind,
                    "target_id": target_id,
                    "book_id": book_id,
                    "attached_by": attached_by,
                    "position": position,
                    "created_at": now(),
                }
                conn.execute(sa.insert(t.attachments).values(**found))
            return record_of(AttachmentRecord, found)

    def detach(self, book_id: str, target_kind: TargetKind, target_id: str, owner_id: str) -> bool:
        """Remove ``owner_id``'s attachment; False when there was none."""
        check_target(target_kind, target_id)
        with write_tx(self._engine) as conn:
            result = conn.execute(
                sa.delete(t.attachments).where(
                    t.attachments.c.attached_by == owner_id,
                    t.attachments.c.target_kind == target_kind,
                    t.attachments.c.target_id == target_id,
                    t.attachments.c.book_id == book_id,
                )
            )
            return bool(result.rowcount)

    def attachments_for(self, target_kind: TargetKind, target_id: str, owner_id: str) -> list[str]:
        """Book ids ``owner_id`` attached to the target, in attachment order (trashed books
        left out). Attachments are scoped by who made them (docs/decisions.md)."""
        check_target(target_kind, target_id)
        stmt = (
            sa.select(t.attachments.c.book_id)
            .join(t.books, t.books.c.id == t.attachments.c.book_id)
            .where(
                t.attachments.c.attached_by == owner_id,
                t.attachments.c.target_kind == target_kind,
                t.attachments.c.target_id == target_id,
                t.books.c.deleted_at.is_(None),
            )
            .order_by(t.attachments.c.position, t.attachments.c.id)
        )
        with read_tx(self._engine) as conn:
            return [row[0] for row in conn.execute(stmt)]
