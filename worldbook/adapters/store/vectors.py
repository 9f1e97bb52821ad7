"""Entry vectors and index status: the database is the source of truth for every replica.

A vector row carries the content hash of the text it was computed from; only rows whose hash
equals the entry's current hash are ever returned (DESIGN §2 rule 6), so an edit made while a
worker was embedding can never let a stale vector through.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase, check_ids
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.embed_text import as_vector_matrix, entry_text
from worldbook.core.records import EntryToIndex, now
from worldbook.core.types import IndexStatus
from worldbook.ports import BookVectors, Vectors


def _current(model_id: str) -> sa.ColumnElement[bool]:
    """Join condition: a vector of ``model_id`` computed from the entry's current text."""
    return sa.and_(
        t.entry_vectors.c.entry_id == t.entries.c.id,
        t.entry_vectors.c.model_id == model_id,
        t.entry_vectors.c.content_hash == t.entries.c.content_hash,
    )


VectorItem = tuple[str, str, Vectors]
"""One item of :meth:`VectorsMixin.save_vectors_many`: (entry id, content hash, vectors)."""

_IN_CHUNK = 500  # ids per IN (...) list: well under SQLite's and PostgreSQL's parameter limits


class VectorsMixin(StoreBase):
    def save_vectors(
        self, entry_id: str, model_id: str, content_hash: str, vectors: Vectors
    ) -> bool:
        """Replace the entry's chunks for ``model_id`` and mark it indexed.

        Returns False (and writes nothing) when the entry is gone or its text changed since
        ``content_hash`` was read: the newer text is queued and will be embedded instead.
        """
        return self.save_vectors_many(model_id, [(entry_id, content_hash, vectors)])[0]

    def save_vectors_many(self, model_id: str, items: Sequence[VectorItem]) -> list[bool]:
        """:meth:`save_vectors` for a whole batch, in ONE transaction; one flag per item.

        Per item the rule is the same: an item whose entry is gone or whose hash moved on is
        skipped (False); the others replace their chunks for ``model_id`` and are marked
        indexed. Every touched book's ``index_version`` is bumped once. One transaction per
        batch instead of per entry is what keeps indexing near the raw embedder's speed (a
        commit costs an fsync on SQLite and a round trip on PostgreSQL). If an entry id comes
        twice, the last item's vectors are kept (as successive ``save_vectors`` calls would).
        """
        matrices = [as_vector_matrix(entry_id, v) for entry_id, _, v in items]
        if not matrices:
            return []
        ids = sorted({entry_id for entry_id, _, _ in items})
        with write_tx(self._engine) as conn:
            book_of = self._column(conn, t.entries.c.book_id, ids)
            books = sorted(set(book_of.values()))
            # Lock the books first, in a fixed order, like every other entry write (base.py):
            # then no edit can change a hash between our check and our write, and two
            # workers saving into the same books cannot deadlock.
            for start in range(0, len(books), _IN_CHUNK):
                conn.execute(
                    sa.select(t.books.c.id)
                    .where(t.books.c.id.in_(books[start : start + _IN_CHUNK]))
                    .order_by(t.books.c.id)
                    .with_for_update()
                )
            current = self._column(conn, t.entries.c.content_hash, ids)
            flags = [current.get(entry_id) == h for entry_id, h, _ in items]
            fresh: dict[str, tuple[str, Vectors]] = {}
            for (entry_id, content_hash, _), matrix, ok in zip(items, matrices, flags, strict=True):
                if ok:
                    fresh[entry_id] = (content_hash, matrix)
            if fresh:
                self._replace_vectors(conn, model_id, dict(sorted(fresh.items())))
                touched = sorted({book_of[entry_id] for entry_id in fresh})
                for start in range(0, len(touched), _IN_CHUNK):
                    conn.execute(
                        sa.update(t.books)
                        .where(t.books.c.id.in_(touched[start : start + _IN_CHUNK]))
                        .values(index_version=t.books.c.index_version + 1)
                    )
        return flags

    @staticmethod
    def _column(conn: sa.Connection, column: sa.Column[str], ids: list[str]) -> dict[str, str]:
        """entry id → ``column`` for those of ``ids`` that exist."""
        found: dict[str, str] = {}
        for start in range(0, len(ids), _IN_CHUNK):
            rows = conn.execute(
                sa.select(t.entries.c.id, column).where(
                    t.entries.c.id.in_(ids[start : start + _IN_CHUNK])
                )
            )
            found.update({r[0]: r[1] for r in rows})
        return found

    @staticmethod
    def _replace_vectors(
        conn: sa.Connection, model_id: str, fresh: dict[str, tuple[str, Vectors]]
    ) -> None:
        """Swap the chunks of ``fresh`` entries for new ones and mark those entries indexed."""
        ids = list(fresh)
        for start in range(0, len(ids), _IN_CHUNK):
            part = ids[start : start + _IN_CHUNK]
            conn.execute(
                sa.delete(t.entry_vectors).where(
                    t.entry_vectors.c.entry_id.in_(part), t.entry_vectors.c.model_id == model_id
                )
            )
            conn.execute(
                sa.update(t.entries)
                .where(t.entries.c.id.in_(part))
                .values(
                    index_status=IndexStatus.INDEXED.value, index_error=None, index_status_at=now()
                )
            )
        conn.execute(
            sa.insert(t.entry_vectors),
            [
                {
                    "entry_id": entry_id,
                    "model_id": model_id,
                    "chunk": i,
                    "content_hash": content_hash,
                    "dim": int(matrix.shape[1]),
                    "vector": np.ascontiguousarray(row).tobytes(),
                }
                for entry_id, (content_hash, matrix) in fresh.items()
                for i, row in enumerate(matrix)
            ],
        )

    def load_book_vectors(self, book_id: str, model_id: str) -> BookVectors:
        """Current vectors of the book's enabled entries, with the text hash of each row.

        Rows are in list order, chunks of one entry together; an entry may own several rows.
        """
        stmt = (
            sa.select(*t.entry_vectors.c["entry_id", "content_hash", "dim", "vector"])
            .join(t.entries, _current(model_id))
            .where(t.entries.c.book_id == book_id, t.entries.c.enabled.is_(True))
            .order_by(t.entries.c.position, t.entries.c.id, t.entry_vectors.c.chunk)
        )
        with read_tx(self._engine) as conn:
            rows = conn.execute(stmt).all()
        if not rows:
            return BookVectors([], np.zeros((0, 0), dtype=np.float32), [])
        dim = rows[0][2]
        matrix = np.frombuffer(b"".join(r[3] for r in rows), dtype=np.float32).reshape(-1, dim)
        return BookVectors([r[0] for r in rows], matrix.copy(), [r[1] for r in rows])

    def set_index_status(
        self, entry_ids: Sequence[str], status: IndexStatus, error: str | None = None
    ) -> None:
        ids = check_ids(entry_ids, field="entry_ids")
        status = IndexStatus(status)
        with write_tx(self._engine) as conn:
            for start in range(0, len(ids), 500):
                conn.execute(
                    sa.update(t.entries)
                    .where(t.entries.c.id.in_(ids[start : start + 500]))
                    .values(index_status=status.value, index_error=error, index_status_at=now())
                )

    def requeue_unindexed(self, model_id: str, entry_ids: Sequence[str]) -> int:
        """Put those of ``entry_ids`` that say ``indexed`` but have no current vector of
        ``model_id`` (the model changed, the entry was re-enabled) back to ``queued``; how many.

        One conditional UPDATE per chunk, so a worker that saves an entry's vector (and marks
        it indexed, in one transaction) between the sweep's read and this write is not undone:
        the sweep used to read the statuses and then write them, and such an entry stayed
        ``queued`` for good with a current vector (nothing would index it again)."""
        ids = check_ids(entry_ids, field="entry_ids")
        c = t.entries.c
        wrong = (c.index_status == IndexStatus.INDEXED.value) & ~sa.exists().where(
            _current(model_id)
        )
        count = 0
        with write_tx(self._engine) as conn:
            for start in range(0, len(ids), _IN_CHUNK):
                done = conn.execute(
                    sa.update(t.entries)
                    .where(c.id.in_(ids[start : start + _IN_CHUNK]), wrong)
                    .values(
                        index_status=IndexStatus.QUEUED.value,
                        index_error=None,
                        index_status_at=now(),
                    )
                )
                count += int(done.rowcount)
        return count

    def requeue_stuck(self, before: datetime) -> list[str]:
        """Put entries that have been ``indexing`` since before ``before`` back to ``queued``
        (their worker died); returns their ids, for the caller to enqueue."""
        c = t.entries.c
        stuck = (c.index_status == IndexStatus.INDEXING.value) & (
            c.index_status_at.is_(None) | (c.index_status_at < before)
        )
        with write_tx(self._engine) as conn:
            ids = list(conn.execute(sa.select(c.id).where(stuck)).scalars())
            for start in range(0, len(ids), _IN_CHUNK):
                conn.execute(
                    sa.update(t.entries)
                    .where(c.id.in_(ids[start : start + _IN_CHUNK]), stuck)
                    .values(index_status=IndexStatus.QUEUED.value, index_status_at=now())
                )
        return ids

    def index_overview(self) -> tuple[dict[str, int], datetime | None]:
        """Entries per index state (every state named, 0 when none), and the time the
        longest-queued entry was queued (None: nothing queued). Two indexed aggregate reads."""
        c = t.entries.c
        counts = {s.value: 0 for s in IndexStatus}
        with read_tx(self._engine) as conn:
            rows = conn.execute(sa.select(c.index_status, sa.func.count()).group_by(c.index_status))
            counts.update({str(r[0]): int(r[1]) for r in rows})
            oldest = conn.execute(
                sa.select(sa.func.min(c.index_status_at)).where(
                    c.index_status == IndexStatus.QUEUED.value
                )
            ).scalar()
        if isinstance(oldest, datetime) and oldest.tzinfo is None:
            oldest = oldest.replace(tzinfo=UTC)  # SQLite hands back naive UTC
        return counts, oldest

    def index_statuses(self, entry_ids: Sequence[str]) -> dict[str, tuple[IndexStatus, str | None]]:
        """entry id → (index status, last error) for those of ``entry_ids`` that exist."""
        ids = check_ids(entry_ids, field="entry_ids")
        found: dict[str, tuple[IndexStatus, str | None]] = {}
        with read_tx(self._engine) as conn:
            for start in range(0, len(ids), 500):
                rows = conn.execute(
                    sa.select(
                        t.entries.c.id, t.entries.c.index_status, t.entries.c.index_error
                    ).where(t.entries.c.id.in_(ids[start : start + 500]))
                )
                found.update({r[0]: (IndexStatus(r[1]), r[2]) for r in rows})
        return found

    def entries_to_index(
        self, model_id: str, book_id: str | None = None, entry_ids: Sequence[str] | None = None
    ) -> list[EntryToIndex]:
        """Enabled entries of live books with no current vector for ``model_id``.

        Optionally narrowed to one book and/or to ``entry_ids``; in book, then list, order.
        """
        stmt = (
            sa.select(*t.entries.c["id", "book_id", "content_hash", "title", "aliases", "lore"])
            .join(t.books, t.books.c.id == t.entries.c.book_id)
            .where(
                t.entries.c.enabled.is_(True),
                t.books.c.deleted_at.is_(None),
                ~sa.exists().where(_current(model_id)),
            )
            .order_by(t.entries.c.book_id, t.entries.c.position, t.entries.c.id)
        )
        if book_id is not None:
            stmt = stmt.where(t.entries.c.book_id == book_id)
        if entry_ids is not None:
            stmt = stmt.where(t.entries.c.id.in_(check_ids(entry_ids, field="entry_ids")))
        with read_tx(self._engine) as conn:
            return [
                EntryToIndex(
                    entry_id=r.id,
                    content_hash=r.content_hash,
                    text=entry_text(r.title, r.aliases, r.lore),
                    book_id=r.book_id,
                )
                for r in conn.execute(stmt)
            ]

    def book_index_share(self, book_id: str, model_id: str) -> float:
        """Share of the book's enabled entries with a current vector (1.0 when none)."""
        has_vector = sa.exists().where(_current(model_id))
        stmt = sa.select(sa.func.count(), sa.func.count().filter(has_vector)).where(
            t.entries.c.book_id == book_id, t.entries.c.enabled.is_(True)
        )
        with read_tx(self._engine) as conn:
            total, indexed = conn.execute(stmt).one()
        return 1.0 if not total else indexed / total

    def delete_vectors(self, model_id: str | None = None, book_id: str | None = None) -> int:
        """Drop stored vectors (all, one model's, one book's) and re-queue those entries."""
        in_book = sa.select(t.entries.c.id).where(t.entries.c.book_id == book_id)
        stmt = sa.delete(t.entry_vectors)
        if model_id is not None:
            stmt = stmt.where(t.entry_vectors.c.model_id == model_id)
        if book_id is not None:
            stmt = stmt.where(t.entry_vectors.c.entry_id.in_(in_book))
        requeue = sa.update(t.entries).values(index_status=IndexStatus.QUEUED.value)
        bump = sa.update(t.books).values(index_version=t.books.c.index_version + 1)
        if book_id is not None:
            requeue = requeue.where(t.entries.c.book_id == book_id)
            bump = bump.where(t.books.c.id == book_id)
        with write_tx(self._engine) as conn:
            deleted = conn.execute(stmt).rowcount
            conn.execute(requeue)
            conn.execute(bump)
            return int(deleted)
