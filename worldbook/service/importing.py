"""Import and export use cases (docs/design/import-export.md).

An import parses a file in any format we read (``worldbook.adapters.formats``), creates the
book and adds its entries in batches of at most 500, each batch one transaction that also
advances the import job — so an interrupted import resumes exactly where it stopped, and a
batch is never added twice. A single HTTP request takes at most one batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from worldbook.adapters.formats import export_book, parse_book
from worldbook.core import limits
from worldbook.core.drafts import EntryDraft
from worldbook.core.limits import LIMITS
from worldbook.core.records import ImportJobRecord
from worldbook.core.types import BookMode
from worldbook.errors import WorldbookError
from worldbook.service.access import require_view
from worldbook.service.needs import BookEdits, HasBooks, Importing

ExportFormat = Literal["sillytavern", "ccv3"]


@dataclass(frozen=True, slots=True)
class ImportResult:
    book_id: str
    title: str
    entries: int
    format: str
    warnings: tuple[str, ...] = field(default=())
    resumed: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "book_id": self.book_id,
            "title": self.title,
            "entries": self.entries,
            "format": self.format,
            "warnings": list(self.warnings),
            "resumed": self.resumed,
        }


def import_book(
    services: Importing,
    *,
    owner_id: str,
    data: bytes,
    mode: BookMode = BookMode.WORLD,
    filename: str | None = None,
    single_batch: bool = True,
    on_batch: Callable[[int, int], None] | None = None,
) -> ImportResult:
    """Import a lorebook file as a new book owned by ``owner_id``.

    Args:
        single_batch: an HTTP request — more than 500 entries is refused (import batch limit);
            the CLI passes False and imports up to the 2,000-entry book limit in batches.
        on_batch: ``on_batch(done, total)`` after each batch (progress bars).
    """
    parsed = parse_book(
        data, mode=mode, filename=filename, max_bytes=services.settings.max_upload_bytes
    )
    total = len(parsed.entries)
    if single_batch:
        limits.check_batch(total, field="entries")
    limits.check_entries_per_book(0, total)
    services.keys.ensure_user(owner_id)
    source_sha = hashlib.sha256(data).hexdigest()
    job = None if single_batch else services.imports.find_import_job(owner_id, source_sha)
    resumed = job is not None
    if job is None:
        book = services.books.create_book(owner_id, parsed.book)
        try:
            job = services.imports.create_import_job(book.id, owner_id, source_sha, total)
        except WorldbookError:
            services.books.purge_book(book.id)
            raise
    try:
        _add_batches(services, job, parsed.entries, on_batch)
    except WorldbookError:
        if not resumed and services.imports.get_import_job(job.id).done_entries == 0:
            # Nothing of this import landed: leave no empty book behind.
            services.books.purge_book(job.book_id)
        raise
    services.imports.finish_import_job(job.id)
    book = services.books.get_book(job.book_id)
    return ImportResult(
        book_id=job.book_id,
        title=book.title,
        entries=total,
        format=parsed.format,
        warnings=tuple(parsed.warnings),
        resumed=resumed,
    )


def _add_batches(
    services: BookEdits,
    job: ImportJobRecord,
    entries: list[EntryDraft],
    on_batch: Callable[[int, int], None] | None,
) -> None:
    """Add what the job has not added yet, one import batch per transaction (each advances the
    job in the same transaction, so a resumed import never adds a batch twice)."""
    done, total, size = job.done_entries, len(entries), LIMITS.import_batch
    while done < total:
        batch = entries[done : done + size]
        added = services.books.add_entries(job.book_id, batch, import_job_id=job.id)
        services.enqueue([e.id for e in added])
        done += len(batch)
        if on_batch is not None:
            on_batch(done, total)


def export(services: HasBooks, *, user_id: str, book_id: str, fmt: ExportFormat) -> bytes:
    """A book the user can see, as SillyTavern World Info JSON or a CCv3 ``lorebook_v3``."""
    book = require_view(services.books.get_book(book_id, include_trashed=True), user_id)
    entries = [r.to_draft() for r in services.books.list_entries(book.id)]
    return export_book(book.to_draft(), entries, fmt)
