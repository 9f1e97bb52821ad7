"""Plain, frozen records the store returns (never live ORM objects); pure data, no SQL."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from worldbook.core.drafts import BOOK_FIELDS, ENTRY_FIELDS, BookDraft, EntryDraft, JSONDict
from worldbook.core.types import BookMode, IndexStatus, Role, Visibility

TargetKind = Literal["character", "story", "novel", "global"]
TARGET_KINDS: tuple[TargetKind, ...] = ("character", "story", "novel", "global")
"""``global``: attached for a user (the target id is that user's id): in every turn of theirs."""
UsageVia = Literal["canon", "whole_book", "full", "index"]
USAGE_VIAS: tuple[UsageVia, ...] = ("canon", "whole_book", "full", "index")
USAGE_OF_VIA: dict[str, UsageVia] = {
    "literal": "full",
    "semantic": "full",
    "order": "full",
    "injected": "full",
    # Classic activations: a constant is always-on lore like canon; keys and recursion put an
    # entry in full like a literal hit.
    "constant": "canon",
    "keyword": "full",
    "recursion": "full",
}
"""How a selection's ``via`` counts in the usage counters (usage vias map to themselves)."""
ImportStatus = Literal["running", "done", "failed"]


def utc(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; every record carries aware UTC ones."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=UTC)


def now() -> datetime:
    return datetime.now(UTC)


def _draft_values(record: object, names: Iterable[str]) -> dict[str, Any]:
    """A record's draft fields (the same names) as a draft holds them: lists for tuples, JSON
    objects copied (a draft is edited in place; the record stays as it was)."""
    return {name: _thawed(getattr(record, name)) for name in names}


def _thawed(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return list(value)
    return dict(value) if isinstance(value, dict) else value


@dataclass(frozen=True, slots=True)
class BookQuery:
    """A book listing: every filter given must hold; most recently changed first."""

    owner_id: str | None = None
    visibility: Visibility | None = None
    title_contains: str | None = None
    tag: str | None = None
    trashed: bool = False
    limit: int = 50
    offset: int = 0


EntrySort = Literal["position", "most_used"]


@dataclass(frozen=True, slots=True)
class EntryQuery:
    """An entry listing of one book: filters (None = either), order, page."""

    canon: bool | None = None
    enabled: bool | None = None
    never_used: bool | None = None
    sort: EntrySort = "position"
    limit: int | None = None
    offset: int = 0


ALL_ENTRIES = EntryQuery()


@dataclass(frozen=True, slots=True)
class EntryStamp:
    """What says whether a cached view of an entry is still current: a change of content or
    switch bumps ``updated_at``, a move changes ``position`` (one cheap row per entry)."""

    entry_id: str
    position: int
    changed: str  # when the entry last changed, as the store gives it: compared, never parsed


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    id: str
    name: str
    prefix: str  # the first characters of the secret, for display ("wb_Ab3dE…")
    created_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class BookRecord:
    id: str
    owner_id: str
    title: str
    description: str
    tags: tuple[str, ...]
    visibility: Visibility
    mode: BookMode
    settings: JSONDict
    extensions: JSONDict
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    version: int
    index_version: int
    entry_count: int

    @property
    def trashed(self) -> bool:
        return self.deleted_at is not None

    def to_draft(self) -> BookDraft:
        return BookDraft(**_draft_values(self, BOOK_FIELDS))


@dataclass(frozen=True, slots=True)
class EntryRecord:
    """An entry with every :class:`EntryDraft` field under the same name, plus store fields."""

    id: str
    book_id: str
    position: int
    title: str
    lore: str
    aliases: tuple[str, ...]
    canon: bool
    enabled: bool
    comment: str
    keys: tuple[str, ...]
    secondary_keys: tuple[str, ...]
    selective: bool
    selective_logic: int
    constant: bool
    order: int
    priority: int | None
    role: Role
    whole_words: bool | None
    case_sensitive: bool | None
    probability: int
    scan_depth: int | None
    decorators: tuple[str, ...]
    extensions: JSONDict
    content_hash: str
    index_status: IndexStatus
    index_error: str | None
    created_at: datetime
    updated_at: datetime
    index_status_at: datetime | None = None  # when index_status last changed

    def to_draft(self) -> EntryDraft:
        return EntryDraft(**_draft_values(self, ENTRY_FIELDS))


@dataclass(frozen=True, slots=True)
class AttachmentRecord:
    target_kind: TargetKind
    target_id: str
    book_id: str
    attached_by: str
    position: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class EntryUsageRecord:
    entry_id: str
    total: int = 0
    canon: int = 0
    whole_book: int = 0
    full: int = 0
    index: int = 0
    last_used_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ImportJobRecord:
    id: str
    book_id: str
    owner_id: str
    source_sha256: str
    total_entries: int
    done_entries: int
    status: ImportStatus
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class EntryToIndex:
    """An entry waiting for a vector of some model: what to embed and the hash to save with it."""

    entry_id: str
    content_hash: str
    text: str
    book_id: str = field(default="")


@dataclass(frozen=True, slots=True)
class ChatLogRecord:
    """One turn of a chat's request log (what went in and why; see service/request_log.py).

    ``id`` grows with every logged turn of the store (newest = highest)."""

    id: int
    owner_id: str
    chat_id: str
    created_at: datetime
    record: JSONDict
