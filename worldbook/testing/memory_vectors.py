"""The vectors and index-state role of the in-memory store (``ports.VectorStore``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

import numpy as np

from worldbook.core.embed_text import as_vector_matrix, entry_text
from worldbook.core.records import (
    EntryRecord,
    EntryToIndex,
    now,
)
from worldbook.core.types import IndexStatus
from worldbook.ports import BookVectors, Vectors
from worldbook.testing.memory_entries import EntryTable


class VectorTable(EntryTable):
    """The vectors and index-state role of the in-memory store (``ports.VectorStore``)."""

    # --- vectors and index status --------------------------------------------------------
    def save_vectors(
        self, entry_id: str, model_id: str, content_hash: str, vectors: Vectors
    ) -> bool:
        return self.save_vectors_many(model_id, [(entry_id, content_hash, vectors)])[0]

    def save_vectors_many(
        self, model_id: str, items: Sequence[tuple[str, str, Vectors]]
    ) -> list[bool]:
        matrices = [as_vector_matrix(entry_id, v).copy() for entry_id, _, v in items]
        flags: list[bool] = []
        with self._lock:
            touched: set[str] = set()
            for (entry_id, content_hash, _), matrix in zip(items, matrices, strict=True):
                entry = self._entries.get(entry_id)
                ok = entry is not None and entry.content_hash == content_hash
                flags.append(ok)
                if entry is not None and ok:
                    self._vectors[(entry_id, model_id)] = (content_hash, matrix)
                    self._entries[entry_id] = replace(
                        entry,
                        index_status=IndexStatus.INDEXED,
                        index_error=None,
                        index_status_at=now(),
                    )
                    touched.add(entry.book_id)
            for book_id in touched:
                book = self._books[book_id]
                self._books[book_id] = replace(book, index_version=book.index_version + 1)
        return flags

    def _current_vector(self, entry: EntryRecord, model_id: str) -> Vectors | None:
        stored = self._vectors.get((entry.id, model_id))
        if stored is None or stored[0] != entry.content_hash:
            return None
        return stored[1]

    def load_book_vectors(self, book_id: str, model_id: str) -> BookVectors:
        ids: list[str] = []
        hashes: list[str] = []
        rows: list[Vectors] = []
        with self._lock:
            for entry in self._book_entries(book_id):
                matrix = self._current_vector(entry, model_id) if entry.enabled else None
                if matrix is not None:
                    ids.extend([entry.id] * matrix.shape[0])
                    hashes.extend([entry.content_hash] * matrix.shape[0])
                    rows.append(matrix)
        if not rows:
            return BookVectors([], np.zeros((0, 0), dtype=np.float32), [])
        return BookVectors(ids, np.concatenate(rows).astype(np.float32), hashes)

    def set_index_status(
        self, entry_ids: Sequence[str], status: IndexStatus, error: str | None = None
    ) -> None:
        status = IndexStatus(status)
        with self._lock:
            for entry_id in entry_ids:
                entry = self._entries.get(entry_id)
                if entry is not None:
                    self._entries[entry_id] = replace(
                        entry, index_status=status, index_error=error, index_status_at=now()
                    )

    def requeue_unindexed(self, model_id: str, entry_ids: Sequence[str]) -> int:
        with self._lock:  # one critical section, as the SQL store's one statement
            wrong = [
                e
                for i in dict.fromkeys(entry_ids)
                if (e := self._entries.get(i)) is not None
                and e.index_status == IndexStatus.INDEXED
                and self._current_vector(e, model_id) is None
            ]
            for entry in wrong:
                self._entries[entry.id] = replace(
                    entry, index_status=IndexStatus.QUEUED, index_error=None, index_status_at=now()
                )
            return len(wrong)

    def requeue_stuck(self, before: datetime) -> list[str]:
        with self._lock:
            stuck = [
                e
                for e in self._entries.values()
                if e.index_status == IndexStatus.INDEXING
                and (e.index_status_at is None or e.index_status_at < before)
            ]
            for entry in stuck:
                self._entries[entry.id] = replace(
                    entry, index_status=IndexStatus.QUEUED, index_status_at=now()
                )
            return [e.id for e in stuck]

    def index_overview(self) -> tuple[dict[str, int], datetime | None]:
        with self._lock:
            entries = list(self._entries.values())
        counts = {s.value: 0 for s in IndexStatus}
        for entry in entries:
            counts[IndexStatus(entry.index_status).value] += 1
        queued = [
            e.index_status_at
            for e in entries
            if e.index_status == IndexStatus.QUEUED and e.index_status_at is not None
        ]
        return counts, min(queued, default=None)

    def index_statuses(self, entry_ids: Sequence[str]) -> dict[str, tuple[IndexStatus, str | None]]:
        with self._lock:
            return {
                i: (self._entries[i].index_status, self._entries[i].index_error)
                for i in entry_ids
                if i in self._entries
            }

    def entries_to_index(
        self, model_id: str, book_id: str | None = None, entry_ids: Sequence[str] | None = None
    ) -> list[EntryToIndex]:
        wanted = set(entry_ids) if entry_ids is not None else None
        with self._lock:
            return [
                EntryToIndex(
                    e.id, e.content_hash, entry_text(e.title, e.aliases, e.lore), e.book_id
                )
                for e in sorted(self._entries.values(), key=lambda e: (e.book_id, e.position, e.id))
                if e.enabled
                and not self._books[e.book_id].trashed
                and (book_id is None or e.book_id == book_id)
                and (wanted is None or e.id in wanted)
                and self._current_vector(e, model_id) is None
            ]

    def book_index_share(self, book_id: str, model_id: str) -> float:
        with self._lock:
            enabled = [e for e in self._book_entries(book_id) if e.enabled]
            indexed = sum(1 for e in enabled if self._current_vector(e, model_id) is not None)
        return 1.0 if not enabled else indexed / len(enabled)

    def delete_vectors(self, model_id: str | None = None, book_id: str | None = None) -> int:
        with self._lock:
            doomed = [
                key
                for key in self._vectors
                if (model_id is None or key[1] == model_id)
                and (book_id is None or self._entries[key[0]].book_id == book_id)
            ]
            rows = sum(int(self._vectors[key][1].shape[0]) for key in doomed)  # chunks, as SQL
            for key in doomed:
                del self._vectors[key]
            for entry in list(self._entries.values()):
                if book_id is None or entry.book_id == book_id:
                    self._entries[entry.id] = replace(entry, index_status=IndexStatus.QUEUED)
            for book in list(self._books.values()):
                if book_id is None or book.id == book_id:
                    self._books[book.id] = replace(book, index_version=book.index_version + 1)
            return rows
