"""Users, API keys, books (trash, copy helpers) and attachments of the in-memory store."""

from __future__ import annotations

import hmac
import threading
from dataclasses import replace
from datetime import date
from typing import Any

from worldbook.core import limits
from worldbook.core.api_keys import api_key_prefix, hash_secret, new_api_key
from worldbook.core.drafts import BOOK_FIELDS, BookDraft, check_known_fields, norm_tag
from worldbook.core.limits import check_page
from worldbook.core.records import (
    ApiKeyRecord,
    AttachmentRecord,
    BookQuery,
    BookRecord,
    TargetKind,
    now,
)
from worldbook.core.store_rules import (
    changed_book,
    check_target,
    check_user_id,
    new_book_record,
    new_id,
)
from worldbook.core.types import BookMode, Visibility
from worldbook.errors import ApiKeyNotFound, BookNotFound


class BookTable:
    """The book side of :class:`~worldbook.testing.memory_store.InMemoryStore`."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._users: set[str] = set()
        self._keys: dict[str, tuple[ApiKeyRecord, str]] = {}
        self._books: dict[str, BookRecord] = {}
        self._turns: dict[str, int] = {}
        self._turn_days: dict[str, dict[date, int]] = {}  # book id → UTC day → turns
        self._attachments: list[AttachmentRecord] = []

    def close(self) -> None:
        """Nothing to release."""

    # --- users and keys ------------------------------------------------------------------
    def ensure_user(self, user_id: str) -> None:
        check_user_id(user_id)
        with self._lock:
            self._users.add(user_id)

    def create_api_key(self, name: str) -> tuple[ApiKeyRecord, str]:
        limits.check_text(name, field="name", limit="API key name", max_len=200, blank_ok=False)
        plaintext, prefix = new_api_key()
        record = ApiKeyRecord(new_id(), name, prefix, now())
        with self._lock:
            self._keys[record.id] = (record, hash_secret(plaintext))
        return record, plaintext

    def authenticate(self, plaintext: str) -> ApiKeyRecord | None:
        if api_key_prefix(plaintext) is None:
            return None
        digest = hash_secret(plaintext)
        with self._lock:
            for record, stored in self._keys.values():
                if hmac.compare_digest(stored, digest):
                    return None if record.revoked_at is not None else record
        return None

    def revoke_api_key(self, key_id: str) -> ApiKeyRecord:
        with self._lock:
            if key_id not in self._keys:
                raise ApiKeyNotFound(f"API key {key_id!r} does not exist.", field="key_id")
            record, digest = self._keys[key_id]
            if record.revoked_at is None:
                record = replace(record, revoked_at=now())
                self._keys[key_id] = (record, digest)
            return record

    def list_api_keys(self) -> list[ApiKeyRecord]:
        with self._lock:
            return sorted((r for r, _ in self._keys.values()), key=lambda r: r.created_at)

    # --- books ---------------------------------------------------------------------------
    def _book_or_missing(self, book_id: str) -> BookRecord:
        found = self._books.get(book_id)
        if found is None:
            raise BookNotFound.for_id(book_id)
        return found

    def _live_book(self, book_id: str, *, include_trashed: bool = False) -> BookRecord:
        found = self._book_or_missing(book_id)
        if found.trashed and not include_trashed:
            raise BookNotFound.for_id(book_id)
        return found

    def _touch(self, book_id: str, **values: Any) -> BookRecord:
        book = self._books[book_id]
        book = replace(book, version=book.version + 1, updated_at=now(), **values)
        self._books[book_id] = book
        return book

    def _insert_book(self, owner_id: str, draft: BookDraft) -> BookRecord:
        check_user_id(owner_id, field="owner_id")
        record = new_book_record(new_id(), owner_id, draft, at=now())
        self._users.add(owner_id)
        self._books[record.id] = record
        self._turns[record.id] = 0
        return record

    def _forget_book(self, book_id: str) -> None:
        del self._books[book_id]
        self._turns.pop(book_id, None)
        self._turn_days.pop(book_id, None)
        self._attachments = [a for a in self._attachments if a.book_id != book_id]

    def create_book(self, owner_id: str, draft: BookDraft) -> BookRecord:
        limits.validate_book_draft(draft, field="book")
        if draft.visibility == Visibility.PUBLIC:
            limits.check_publish(0, field="book.visibility")
        with self._lock:
            return self._insert_book(owner_id, draft)

    def get_book(self, book_id: str, *, include_trashed: bool = False) -> BookRecord:
        with self._lock:
            return self._live_book(book_id, include_trashed=include_trashed)

    def _check_mode_switch(self, book: BookRecord, draft: BookDraft) -> None:
        raise NotImplementedError  # the entry side knows the lore

    def update_book(self, book_id: str, **changes: Any) -> BookRecord:
        check_known_fields(changes, BOOK_FIELDS, kind="book")
        with self._lock:
            book = self._live_book(book_id)
            draft = changed_book(book, changes)
            self._check_mode_switch(book, draft)
            values: dict[str, Any] = {name: getattr(draft, name) for name in changes}
            for name, kind in (("visibility", Visibility), ("mode", BookMode)):
                if name in values:
                    values[name] = kind(values[name])
            for name in ("settings", "extensions"):
                if name in values:
                    values[name] = dict(values[name])
            if "tags" in values:
                values["tags"] = tuple(values["tags"])
            return self._touch(book_id, **values)

    def trash_book(self, book_id: str) -> BookRecord:
        with self._lock:
            self._live_book(book_id)
            return self._touch(book_id, deleted_at=now())

    def restore_book(self, book_id: str) -> BookRecord:
        with self._lock:
            book = self._live_book(book_id, include_trashed=True)
            return self._touch(book_id, deleted_at=None) if book.trashed else book

    def list_books(self, query: BookQuery) -> list[BookRecord]:
        check_page(query.limit, query.offset)
        q = query
        text = (q.title_contains or "").casefold()
        with self._lock:
            books = [
                b
                for b in self._books.values()
                if b.trashed == q.trashed
                and (q.owner_id is None or b.owner_id == q.owner_id)
                and (q.visibility is None or b.visibility == Visibility(q.visibility))
                and text in b.title.casefold()
                and (not q.tag or norm_tag(q.tag) in {norm_tag(t) for t in b.tags})
            ]
        books.sort(key=lambda b: b.id)
        books.sort(key=lambda b: b.updated_at, reverse=True)
        return books[q.offset : q.offset + q.limit]

    # --- attachments ---------------------------------------------------------------------
    def attach(
        self, book_id: str, target_kind: TargetKind, target_id: str, attached_by: str
    ) -> AttachmentRecord:
        check_target(target_kind, target_id)
        check_user_id(attached_by, field="attached_by")
        with self._lock:
            self._live_book(book_id)
            mine = self._attached(target_kind, target_id, attached_by)
            for found in mine:
                if found.book_id == book_id:
                    return found
            position = max((a.position for a in mine), default=0) + 1
            record = AttachmentRecord(target_kind, target_id, book_id, attached_by, position, now())
            self._attachments.append(record)
            return record

    def _attached(self, kind: str, target_id: str, owner_id: str) -> list[AttachmentRecord]:
        return [
            a
            for a in self._attachments
            if a.target_kind == kind and a.target_id == target_id and a.attached_by == owner_id
        ]

    def detach(self, book_id: str, target_kind: TargetKind, target_id: str, owner_id: str) -> bool:
        check_target(target_kind, target_id)
        with self._lock:
            before = len(self._attachments)
            self._attachments = [
                a
                for a in self._attachments
                if not (
                    a.book_id == book_id
                    and a.target_kind == target_kind
                    and a.target_id == target_id
                    and a.attached_by == owner_id
                )
            ]
            return len(self._attachments) < before

    def attachments_for(self, target_kind: TargetKind, target_id: str, owner_id: str) -> list[str]:
        check_target(target_kind, target_id)
        with self._lock:
            found = sorted(self._attached(target_kind, target_id, owner_id), key=_position)
            return [a.book_id for a in found if not self._books[a.book_id].trashed]


def _position(attachment: AttachmentRecord) -> int:
    return attachment.position
