"""An in-memory :class:`~worldbook.ports.Store`: the same rules, errors and records as the SQL
store, for unit tests of the use cases (turns, library, importing) without a database.

Every write validates first (``worldbook.core.limits``) and changes state only once nothing can
fail, so a refused write changes nothing — as a transaction would. One re-entrant lock serialises
all calls. The store tests run against it too (``tests/integration/test_store.py``), which keeps
it honest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime

import numpy as np

from worldbook.core.embed_text import as_vector_matrix, entry_text
from worldbook.core.records import (
    USAGE_VIAS,
    EntryRecord,
    EntryToIndex,
    EntryUsageRecord,
    ImportJobRecord,
    ImportStatus,
    now,
)
from worldbook.core.store_rules import check_usage_vias, new_id, turn_usage
from worldbook.core.types import IndexStatus
from worldbook.errors import (
    InvalidInput,
    NotFound,
)
from worldbook.ports import BookVectors, Vectors
from worldbook.testing.memory_chats import ChatTable
from worldbook.testing.memory_writes import WriteTable


class InMemoryStore(ChatTable, WriteTable):
    """The ``Store`` port in memory: books and attachments (:class:`BookTable`), entries
    (:class:`EntryTable`), chats (:class:`ChatTable`), the living world (:class:`WriteTable`),
    and here vectors, usage, token counts and import jobs."""

    def __init__(self) -> None:
        super().__init__()
        self._token_counts: dict[tuple[str, str], int] = {}

    def purge_book(self, book_id: str) -> None:
        with self._lock:
            super().purge_book(book_id)
            self._forget_chat_states(book_id)

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

    # --- usage and token counts ----------------------------------------------------------
    def record_turn_usage(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None:
        self.add_usage_counts(*turn_usage(book_ids, uses))

    def add_usage_counts(
        self, book_turns: Mapping[str, int], entry_counts: Mapping[str, Mapping[str, int]]
    ) -> None:
        check_usage_vias(entry_counts)
        stamp = now()
        with self._lock:
            for book_id, n in book_turns.items():
                if book_id in self._turns:
                    self._turns[book_id] += n
                    days = self._turn_days.setdefault(book_id, {})
                    days[stamp.date()] = days.get(stamp.date(), 0) + n
            for entry_id, counts in entry_counts.items():
                usage = self._entry_usage.get(entry_id)
                total = sum(int(counts.get(via, 0)) for via in USAGE_VIAS)
                if usage is None or not total:
                    continue
                bumped = {via: getattr(usage, via) + int(counts.get(via, 0)) for via in USAGE_VIAS}
                self._entry_usage[entry_id] = replace(
                    usage, total=usage.total + total, last_used_at=stamp, **bumped
                )

    def book_turns(self, book_id: str) -> int:
        with self._lock:
            return self._turns.get(book_id, 0)

    def book_turns_by_day(self, book_id: str, since: date) -> dict[date, int]:
        with self._lock:
            days = self._turn_days.get(book_id, {})
            return {day: n for day, n in days.items() if day >= since and n}

    def entry_usage(self, book_id: str) -> dict[str, EntryUsageRecord]:
        with self._lock:
            return {e.id: self._entry_usage[e.id] for e in self._book_entries(book_id)}

    def usage_alerts(self, book_id: str, min_turns: int) -> list[str]:
        if self.book_turns(book_id) < min_turns:
            return []
        with self._lock:
            return [
                e.id
                for e in self._book_entries(book_id)
                if e.enabled and not e.canon and self._entry_usage[e.id].total == 0
            ]

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        with self._lock:
            return {
                h: self._token_counts[(tokenizer_id, h)]
                for h in hashes
                if (tokenizer_id, h) in self._token_counts
            }

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        with self._lock:
            for h, n in counts.items():
                self._token_counts.setdefault((tokenizer_id, h), int(n))

    # --- import jobs ---------------------------------------------------------------------
    def create_import_job(
        self, book_id: str, owner_id: str, source_sha256: str, total_entries: int
    ) -> ImportJobRecord:
        if total_entries < 0:
            raise InvalidInput("total_entries must be ≥ 0.", field="total_entries")
        stamp = now()
        with self._lock:
            self._live_book(book_id)
            job = ImportJobRecord(
                new_id(),
                book_id,
                owner_id,
                source_sha256,
                total_entries,
                0,
                "running",
                stamp,
                stamp,
            )
            self._jobs[job.id] = job
            return job

    def get_import_job(self, job_id: str) -> ImportJobRecord:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFound(f"import job {job_id!r} does not exist.", field="job_id")
        return job

    def find_import_job(self, owner_id: str, source_sha256: str) -> ImportJobRecord | None:
        with self._lock:
            running = [
                j
                for j in self._jobs.values()
                if j.owner_id == owner_id
                and j.source_sha256 == source_sha256
                and j.status == "running"
            ]
        return max(running, key=lambda j: j.created_at, default=None)

    def advance_import_job(self, job_id: str, done_entries: int) -> ImportJobRecord:
        with self._lock:
            job = self.get_import_job(job_id)
            self._running_job(job_id, job.book_id)
            self._advance(job_id, done_entries)
            return self._jobs[job_id]

    def finish_import_job(self, job_id: str, status: ImportStatus = "done") -> ImportJobRecord:
        if status not in ("done", "failed"):
            raise InvalidInput('status must be "done" or "failed".', field="status")
        with self._lock:
            job = self.get_import_job(job_id)
            self._jobs[job_id] = replace(job, status=status, updated_at=now())
            return self._jobs[job_id]
