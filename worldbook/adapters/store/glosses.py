"""Glosses (ADR 0023): an entry's name and gist written by the app's model in a reader language.

They live in their own table, ``entry_glosses``, never among the author's entries, aliases or
exports. Like a vector, a gloss carries the content hash of the entry text it was written from
and only rows whose hash is the entry's current one are ever returned (DESIGN §2 rule 6): an
edit retires the glosses of the old text without a write. Deleting an entry or purging a book
removes its glosses through the foreign keys' ON DELETE CASCADE (SQLite's foreign keys are on,
``engine.py``). ``copy_book`` leaves them behind: the copy's entries get them regenerated.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.glosses import Gloss
from worldbook.core.records import now
from worldbook.core.store_rules import check_gloss_languages, unique_glosses

_IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's and PostgreSQL's parameter limits


class GlossesMixin(StoreBase):
    def save_glosses(self, book_id: str, glosses: Sequence[Gloss]) -> int:
        """Upsert glosses by (entry, language) in one transaction; returns how many were saved.

        A gloss is skipped (not an error: the indexing worker raced an edit or a deletion) when
        its entry is gone, belongs to another book, or was edited since ``content_hash`` was
        read. A repeated (entry, language) pair keeps its last gloss and counts once.
        """
        wanted = unique_glosses(glosses)
        if not wanted:
            return 0
        ids = sorted({entry_id for entry_id, _ in wanted})
        with write_tx(self._engine) as conn:
            # Lock the book as every entry write does (base.py): no edit or deletion can slip
            # between the hash check and the upsert. A purged book simply saves nothing.
            locked = conn.execute(
                sa.select(t.books.c.id).where(t.books.c.id == book_id).with_for_update()
            ).first()
            if locked is None:
                return 0
            current = self._hashes_in_book(conn, book_id, ids)
            stamp = now()
            rows = [
                _row(book_id, gloss, stamp)
                for key, gloss in sorted(wanted.items())
                if current.get(key[0]) == gloss.content_hash
            ]
            if rows:
                insert = (pg_insert if self._pg else sqlite_insert)(t.entry_glosses)
                kept = ("name", "gist", "content_hash", "model", "created_at")
                conn.execute(
                    insert.on_conflict_do_update(
                        index_elements=[t.entry_glosses.c.entry_id, t.entry_glosses.c.language],
                        set_={name: insert.excluded[name] for name in kept},
                    ),
                    rows,
                )
            return len(rows)

    @staticmethod
    def _hashes_in_book(conn: sa.Connection, book_id: str, ids: list[str]) -> dict[str, str]:
        """entry id -> current content hash, for those of ``ids`` that are in ``book_id``."""
        e = t.entries.c
        found: dict[str, str] = {}
        for start in range(0, len(ids), _IN_CHUNK):
            rows = conn.execute(
                sa.select(e.id, e.content_hash).where(
                    e.book_id == book_id, e.id.in_(ids[start : start + _IN_CHUNK])
                )
            )
            found.update({r[0]: r[1] for r in rows})
        return found

    def book_glosses(self, book_id: str) -> list[Gloss]:
        """The current glosses of the book's entries (written from the entry's present text),
        in list order, then by language."""
        g, e = t.entry_glosses.c, t.entries.c
        stmt = (
            sa.select(g.entry_id, g.language, g.name, g.gist, g.content_hash, g.model)
            .join(t.entries, sa.and_(e.id == g.entry_id, e.content_hash == g.content_hash))
            .where(g.book_id == book_id, e.book_id == book_id)
            .order_by(e.position, e.id, g.language)
        )
        with read_tx(self._engine) as conn:
            return [Gloss(*r) for r in conn.execute(stmt)]

    def delete_glosses(self, book_id: str, languages: Sequence[str] | None = None) -> int:
        """Delete the book's glosses, stale ones included (only ``languages`` when given: a
        reader language dropped from the book's settings); returns how many rows went."""
        wanted = check_gloss_languages(languages)
        stmt = sa.delete(t.entry_glosses).where(t.entry_glosses.c.book_id == book_id)
        if wanted is not None:
            stmt = stmt.where(t.entry_glosses.c.language.in_(wanted))
        with write_tx(self._engine) as conn:
            return int(conn.execute(stmt).rowcount)


def _row(book_id: str, gloss: Gloss, stamp: datetime) -> dict[str, Any]:
    return {
        "entry_id": gloss.entry_id,
        "book_id": book_id,
        "language": gloss.language,
        "name": gloss.name,
        "gist": gloss.gist,
        "content_hash": gloss.content_hash,
        "model": gloss.model,
        "created_at": stamp,
    }
