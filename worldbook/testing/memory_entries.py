"""Entries of the in-memory store: add, edit, delete, list, enable/disable, list order,
copy and purge (see :mod:`worldbook.testing.memory_store`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from worldbook.core import limits
from worldbook.core.drafts import (
    ENTRY_FIELDS,
    ENTRY_LIST_FIELDS,
    BookDraft,
    EntryDraft,
    check_known_fields,
    entry_values,
)
from worldbook.core.embed_text import entry_content_hash
from worldbook.core.glosses import Gloss
from worldbook.core.limits import check_entry_query
from worldbook.core.ordering import GAP, Target, parse_target, place
from worldbook.core.records import (
    ALL_ENTRIES,
    BookRecord,
    EntryQuery,
    EntryRecord,
    EntryStamp,
    EntryUsageRecord,
    ImportJobRecord,
    now,
)
from worldbook.core.store_rules import new_id
from worldbook.core.types import BookMode, IndexStatus, Visibility
from worldbook.errors import (
    EntryNotFound,
    InvalidInput,
    NotFound,
)
from worldbook.ports import Vectors
from worldbook.testing.memory_books import BookTable

V = TypeVar("V")


def _entry_from_draft(
    draft: EntryDraft, entry_id: str, book_id: str, position: int, stamp: Any
) -> EntryRecord:
    values = entry_values(draft)
    return EntryRecord(
        id=entry_id,
        book_id=book_id,
        position=position,
        content_hash=entry_content_hash(draft.title, draft.aliases, draft.lore),
        index_status=IndexStatus.QUEUED,
        index_error=None,
        created_at=stamp,
        updated_at=stamp,
        index_status_at=stamp,
        **values,
    )


class EntryTable(BookTable):
    """The entry side of :class:`~worldbook.testing.memory_store.InMemoryStore`."""

    def __init__(self) -> None:
        super().__init__()
        self._entries: dict[str, EntryRecord] = {}
        self._vectors: dict[tuple[str, str], tuple[str, Vectors]] = {}  # (entry, model)
        self._glosses: dict[tuple[str, str], Gloss] = {}  # (entry, language); memory_glosses
        self._entry_usage: dict[str, EntryUsageRecord] = {}
        self._jobs: dict[str, ImportJobRecord] = {}

    # --- entries -------------------------------------------------------------------------
    def _book_entries(self, book_id: str) -> list[EntryRecord]:
        found = [e for e in self._entries.values() if e.book_id == book_id]
        return sorted(found, key=lambda e: (e.position, e.id))

    def _require_in_book(self, book_id: str, ids: list[str]) -> None:
        for entry_id in ids:
            entry = self._entries.get(entry_id)
            if entry is None or entry.book_id != book_id:
                raise EntryNotFound(
                    f"entry {entry_id!r} is not in this book; nothing was changed.", field="ids"
                )

    def _positions(self, book_id: str, ids: list[str], target: Target) -> dict[str, int]:
        moving = set(ids)
        order = [(e.id, e.position) for e in self._book_entries(book_id) if e.id not in moving]
        return place(order, ids, target)

    def _count_entries(self, book_id: str, delta: int) -> None:
        book = self._books[book_id]
        self._books[book_id] = replace(book, entry_count=book.entry_count + delta)

    def add_entries(
        self,
        book_id: str,
        drafts: Sequence[EntryDraft],
        *,
        position: Target = "last",
        import_job_id: str | None = None,
    ) -> list[EntryRecord]:
        target = parse_target(position)
        drafts = list(drafts)
        with self._lock:
            book = self._live_book(book_id)
            limits.validate_entry_drafts(drafts, mode=book.mode)
            limits.check_entries_per_book(book.entry_count, len(drafts))
            if import_job_id is not None:
                self._running_job(import_job_id, book_id)
            if not drafts:
                return []
            ids = [new_id() for _ in drafts]
            positions = self._positions(book_id, ids, target)
            stamp = now()
            for entry_id, draft in zip(ids, drafts, strict=True):
                record = _entry_from_draft(draft, entry_id, book_id, positions.pop(entry_id), stamp)
                self._entries[entry_id] = record
                self._entry_usage[entry_id] = EntryUsageRecord(entry_id=entry_id)
            self._write_positions(positions)
            self._count_entries(book_id, len(ids))
            self._touch(book_id)
            if import_job_id is not None:
                self._advance(import_job_id, len(ids))
            return [self._entries[i] for i in ids]

    def _write_positions(self, positions: Mapping[str, int]) -> None:
        for entry_id, pos in positions.items():
            self._entries[entry_id] = replace(self._entries[entry_id], position=pos)

    def _entry_in(self, table: Mapping[str, V], entry_id: str) -> V:
        """``table[entry_id]`` (entries, the trash), read under the lock; else EntryNotFound."""
        with self._lock:
            found = table.get(entry_id)
        if found is None:
            raise EntryNotFound.for_id(entry_id)
        return found

    def get_entry(self, entry_id: str) -> EntryRecord:
        return self._entry_in(self._entries, entry_id)

    def entry_stamps(self, book_id: str) -> list[EntryStamp]:
        with self._lock:
            entries = self._book_entries(book_id)
            return [EntryStamp(e.id, e.position, e.updated_at.isoformat()) for e in entries]

    def get_entries(self, book_id: str, ids: Sequence[str]) -> list[EntryRecord]:
        wanted = set(ids)
        with self._lock:
            return [e for e in self._book_entries(book_id) if e.id in wanted]

    def update_entry(self, entry_id: str, **changes: Any) -> EntryRecord:
        check_known_fields(changes, ENTRY_FIELDS, kind="entry")
        with self._lock:
            current = self.get_entry(entry_id)
            book = self._live_book(current.book_id)
            draft = current.to_draft()
            for name, value in changes.items():
                setattr(draft, name, value)
            limits.validate_entry_draft(draft, field="entry", mode=book.mode)
            values = {n: getattr(draft, n) for n in changes}
            for name in ENTRY_LIST_FIELDS:
                if name in values:
                    values[name] = tuple(values[name])
            content_hash = entry_content_hash(draft.title, draft.aliases, draft.lore)
            if content_hash != current.content_hash:
                values.update(
                    index_status=IndexStatus.QUEUED, index_error=None, index_status_at=now()
                )
            updated = replace(current, content_hash=content_hash, updated_at=now(), **values)
            self._entries[entry_id] = updated
            self._touch(book.id)
            return updated

    def delete_entries(self, book_id: str, ids: Sequence[str]) -> int:
        ids = list(dict.fromkeys(ids))
        limits.check_bulk(len(ids))
        with self._lock:
            self._live_book(book_id)
            self._require_in_book(book_id, ids)
            self._drop_entries(ids)
            self._count_entries(book_id, -len(ids))
            self._touch(book_id)
            return len(ids)

    def _drop_entries(self, ids: Sequence[str]) -> None:
        doomed = set(ids)
        for entry_id in doomed:
            self._entries.pop(entry_id, None)
            self._entry_usage.pop(entry_id, None)
        for key in [k for k in self._vectors if k[0] in doomed]:
            del self._vectors[key]
        for gloss_key in [k for k in self._glosses if k[0] in doomed]:  # as ON DELETE CASCADE
            del self._glosses[gloss_key]

    def list_entries(self, book_id: str, query: EntryQuery = ALL_ENTRIES) -> list[EntryRecord]:
        check_entry_query(query)
        q = query
        with self._lock:
            rows = self._book_entries(book_id)
            usage = {e.id: self._entry_usage[e.id].total for e in rows}
        rows = [
            e
            for e in rows
            if (q.canon is None or e.canon == q.canon)
            and (q.enabled is None or e.enabled == q.enabled)
            and (q.never_used is None or (usage[e.id] == 0) == q.never_used)
        ]
        if q.sort == "most_used":
            rows.sort(key=lambda e: -usage[e.id])  # stable: list order breaks ties
        rows = rows[q.offset :]
        return rows[: q.limit] if q.limit is not None else rows

    def set_enabled(self, book_id: str, ids: Sequence[str], enabled: bool) -> int:
        ids = list(dict.fromkeys(ids))
        limits.check_bulk(len(ids))
        with self._lock:
            self._live_book(book_id)
            self._require_in_book(book_id, ids)
            changed = [i for i in ids if self._entries[i].enabled != enabled]
            stamp = now()
            for entry_id in changed:
                self._entries[entry_id] = replace(
                    self._entries[entry_id], enabled=enabled, updated_at=stamp
                )
            if changed:
                self._touch(book_id)
            return len(changed)

    def entry_ids_not_in_book(self, book_id: str, ids: Sequence[str]) -> list[str]:
        with self._lock:
            return [
                i
                for i in dict.fromkeys(ids)
                if i not in self._entries or self._entries[i].book_id != book_id
            ]

    def move_entries(self, book_id: str, ids: Sequence[str], *, to: Target) -> int:
        ids = list(dict.fromkeys(ids))
        limits.check_bulk(len(ids))
        target = parse_target(to)
        if not isinstance(target, str) and target[1] in ids:
            raise InvalidInput("cannot move entries relative to one of themselves.", field="to")
        with self._lock:
            self._live_book(book_id)
            self._require_in_book(book_id, ids)
            in_order = [e.id for e in self._book_entries(book_id) if e.id in set(ids)]
            positions = self._positions(book_id, in_order, target)
            self._write_positions(positions)
            self._touch(book_id)
            return len(positions)

    def copy_book(self, book_id: str, new_owner_id: str) -> BookRecord:
        with self._lock:
            source = self._live_book(book_id)
            draft = source.to_draft()
            draft.visibility = Visibility.PRIVATE
            copy = self._insert_book(new_owner_id, draft)
            stamp = now()
            for i, entry in enumerate(self._book_entries(book_id)):
                new = replace(
                    entry, id=new_id(), book_id=copy.id, position=GAP * (i + 1), created_at=stamp
                )
                self._entries[new.id] = replace(new, updated_at=stamp)
                self._entry_usage[new.id] = EntryUsageRecord(entry_id=new.id)
                for (entry_id, model_id), vector in list(self._vectors.items()):
                    if entry_id == entry.id:
                        self._vectors[(new.id, model_id)] = vector
            self._books[copy.id] = replace(copy, entry_count=source.entry_count)
            return self._books[copy.id]

    def purge_book(self, book_id: str) -> None:
        with self._lock:
            self._book_or_missing(book_id)
            self._drop_entries([e.id for e in self._book_entries(book_id)])
            self._jobs = {k: j for k, j in self._jobs.items() if j.book_id != book_id}
            self._forget_book(book_id)

    def _check_mode_switch(self, book: BookRecord, draft: BookDraft) -> None:
        if draft.mode == BookMode.CLASSIC or book.mode != BookMode.CLASSIC:
            return
        limits.check_world_mode_lore((e.id, e.lore) for e in self._book_entries(book.id))

    def _running_job(self, job_id: str, book_id: str) -> ImportJobRecord:
        job = self._jobs.get(job_id)
        if job is None or job.book_id != book_id or job.status != "running":
            raise NotFound(
                f"no running import job {job_id!r} for this book.", field="import_job_id"
            )
        return job

    def _advance(self, job_id: str, done: int) -> None:
        job = self._jobs[job_id]
        self._jobs[job_id] = replace(job, done_entries=job.done_entries + done, updated_at=now())
