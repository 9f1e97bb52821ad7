"""The resumable-import role of the in-memory store (``ports.ImportStore``)."""

from __future__ import annotations

from dataclasses import replace

from worldbook.core.records import (
    ImportJobRecord,
    ImportStatus,
    now,
)
from worldbook.core.store_rules import new_id
from worldbook.errors import (
    InvalidInput,
    NotFound,
)
from worldbook.testing.memory_entries import EntryTable


class ImportTable(EntryTable):
    """The resumable-import role of the in-memory store (``ports.ImportStore``)."""

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

    def finish_import_job(self, job_id: str, status: ImportStatus = "done") -> ImportJobRecord:
        if status not in ("done", "failed"):
            raise InvalidInput('status must be "done" or "failed".', field="status")
        with self._lock:
            job = self.get_import_job(job_id)
            self._jobs[job_id] = replace(job, status=status, updated_at=now())
            return self._jobs[job_id]
