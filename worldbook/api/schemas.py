"""Request and response models of the HTTP API.

Requests reject unknown fields (``extra="forbid"``): a misspelt field is a 422 naming it, never a
silent no-op. The DESIGN §6 limits are NOT repeated here — the store checks them and its errors
name the limit — except where a value could not even reach it safely: integers are bounded to the
database's 32-bit columns, ids to their shape, and JSON objects to finite numbers.
"""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from worldbook.core.drafts import ENTRY_LIST_FIELDS
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.core.types import BookMode, IndexStatus, Role, Visibility
from worldbook.errors import InvalidInput
from worldbook.service.book_usage import IndexState
from worldbook.service.contract import ID_PATTERN, Id, Request, TargetId

__all__ = ["ID_PATTERN", "Id", "TargetId"]

INT32 = 2**31 - 1
Int32 = Annotated[int, Field(ge=-INT32, le=INT32)]


def _finite(value: Any) -> Any:
    """Reject NaN/Infinity anywhere in a JSON value (PostgreSQL JSON cannot store them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("numbers must be finite (no NaN or Infinity)")
    if isinstance(value, dict):
        for item in value.values():
            _finite(item)
    elif isinstance(value, list):
        for item in value:
            _finite(item)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_finite)]


class Patch(Request):
    """A partial update: only the fields sent change, and ``null`` only where a value may be
    empty (``NULLABLE``); elsewhere it is a 422 naming the field, not a silent reset."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    def changes(self) -> dict[str, Any]:
        sent = self.model_dump(exclude_unset=True)
        for name, value in sent.items():
            if value is None and name not in self.NULLABLE:
                raise InvalidInput(f"{name} cannot be null; leave it out to keep it.", field=name)
        return sent


# --- books ---------------------------------------------------------------------------------


class BookCreate(Request):
    title: str
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    visibility: Visibility = Visibility.PRIVATE
    mode: BookMode = BookMode.WORLD
    settings: JsonObject = Field(default_factory=dict)
    extensions: JsonObject = Field(default_factory=dict)


class BookPatch(Patch):
    """Only the fields sent change; ``visibility: public`` needs at least 10 entries."""

    title: str | None = None
    description: str | None = None
    tags: list[str] | None = None
    visibility: Visibility | None = None
    mode: BookMode | None = None
    settings: JsonObject | None = None
    extensions: JsonObject | None = None


class BookOut(BaseModel):
    id: str
    owner_id: str
    title: str
    description: str
    tags: list[str]
    visibility: Visibility
    mode: BookMode
    settings: dict[str, Any]
    extensions: dict[str, Any]
    entry_count: int
    trashed: bool
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None

    @classmethod
    def of(cls, book: BookRecord) -> BookOut:
        # Same names as the record's fields (``trashed`` is its property); pydantic copies the
        # tuples and dicts into fresh lists and dicts.
        return cls.model_validate(book, from_attributes=True)


class BookList(BaseModel):
    books: list[BookOut]
    limit: int
    offset: int


# --- entries -------------------------------------------------------------------------------


class EntryFields(Request):
    """Every field of an entry (classic-mode fields follow SillyTavern / CCv3)."""

    title: str
    lore: str
    aliases: list[str] = Field(default_factory=list)
    canon: bool = False
    enabled: bool = True
    comment: str = ""
    keys: list[str] = Field(default_factory=list)
    secondary_keys: list[str] = Field(default_factory=list)
    selective: bool | None = Field(
        default=None,
        description="Whether secondary keys apply (SillyTavern / CCv3); default: true when "
        "secondary keys are given.",
    )
    selective_logic: Int32 = 0
    constant: bool = False
    order: Int32 = 100
    priority: Int32 | None = Field(
        default=None, description="Who survives the classic budget; null: the entry's order."
    )
    role: Role = "system"
    whole_words: bool | None = None
    case_sensitive: bool | None = None
    probability: Int32 = 100
    scan_depth: Int32 | None = None
    decorators: list[str] = Field(default_factory=list)
    extensions: JsonObject = Field(default_factory=dict)


class EntryPatch(Patch):
    """Only the fields sent change. A new title, alias list or lore re-queues indexing."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset(
        {"whole_words", "case_sensitive", "scan_depth", "priority"}
    )

    title: str | None = None
    lore: str | None = None
    aliases: list[str] | None = None
    canon: bool | None = None
    enabled: bool | None = None
    comment: str | None = None
    keys: list[str] | None = None
    secondary_keys: list[str] | None = None
    selective: bool | None = None
    selective_logic: Int32 | None = None
    constant: bool | None = None
    order: Int32 | None = None
    priority: Int32 | None = None
    role: Role | None = None
    whole_words: bool | None = None
    case_sensitive: bool | None = None
    probability: Int32 | None = None
    scan_depth: Int32 | None = None
    decorators: list[str] | None = None
    extensions: JsonObject | None = None


MoveTo = Literal["first", "last", "before", "after"]


class Placement(Request):
    """Where entries go: ``first``/``last``, or ``before``/``after`` the ``anchor`` entry."""

    to: MoveTo = "last"
    anchor: Id | None = None


class EntriesCreate(Request):
    """Up to 500 entries (the import batch limit), added in this order at ``position``."""

    entries: list[EntryFields]
    position: Placement = Field(default_factory=Placement)


class MoveRequest(Request):
    ids: list[Id]
    to: MoveTo
    anchor: Id | None = None


class BulkRequest(Request):
    """One action on up to 500 entries of the book; an id of another book refuses the batch."""

    action: Literal["enable", "disable", "delete", "move"]
    ids: list[Id]
    to: MoveTo | None = None
    anchor: Id | None = None


class EntryUsageOut(BaseModel):
    total: int = 0
    canon: int = 0
    whole_book: int = 0
    full: int = 0
    index: int = 0
    last_used_at: datetime | None = None


class EntryOut(EntryFields):
    model_config = ConfigDict(extra="ignore")

    id: str
    book_id: str
    position: int
    tokens: int | None = None
    index_status: IndexStatus
    index_error: str | None
    usage: EntryUsageOut | None = None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(
        cls, entry: EntryRecord, *, tokens: int | None = None, usage: EntryUsageOut | None = None
    ) -> EntryOut:
        values = {
            name: getattr(entry, name)
            for name in EntryOut.model_fields
            if name not in ("usage", "tokens")
        }
        values.update(tokens=tokens, usage=usage)
        for name in ENTRY_LIST_FIELDS:
            values[name] = list(values[name])
        return cls.model_validate(values)


class EntryList(BaseModel):
    book_id: str
    entries: list[EntryOut]
    tokenizer: str
    canon_tokens: int = Field(description="Core canon cost: tokens every turn pays.")
    canon_budget: int = Field(description="Canon budget for the default input window.")
    canon_heavy: bool
    limit: int | None
    offset: int


class MoveResult(BaseModel):
    moved: int


class BulkResult(BaseModel):
    action: str
    changed: int


# --- attachments, library, usage -----------------------------------------------------------


class AttachmentOut(BaseModel):
    target_kind: Literal["character", "story", "novel", "global"]
    target_id: str
    book_id: str
    position: int


class AttachmentList(BaseModel):
    target_kind: str
    target_id: str
    books: list[BookOut]


class UsageEntryOut(EntryUsageOut):
    entry_id: str
    title: str
    canon_entry: bool
    enabled: bool


class UsageOut(BaseModel):
    book_id: str
    turns: int
    alert_turns: int
    never_surfaced: list[UsageEntryOut] = Field(
        description="Enabled when-relevant entries never surfaced, once the book served "
        "alert_turns turns (empty before that)."
    )
    entries: list[UsageEntryOut]


class UsageDayOut(BaseModel):
    day: date = Field(description="A UTC day.")
    turns: int


class UsageDailyOut(BaseModel):
    book_id: str
    days: list[UsageDayOut] = Field(description="Every day of the window, oldest first.")


class IndexStatusOut(IndexState):
    """The service's :class:`~worldbook.service.book_usage.IndexState`, as the route sends it."""


# --- chats: the request log ----------------------------------------------------------------


class LogBookOut(BaseModel):
    book_id: str
    title: str
    mode: str
    character: str | None = None


class LogEntryOut(BaseModel):
    entry_id: str
    book_id: str
    title: str
    reason: str
    character: str | None = None
    via: str | None = None
    tokens: int | None = None
    role: Role | None = None


class LogBudgetOut(BaseModel):
    budget: int
    tokens: int


class LogTurnOut(BaseModel):
    """One logged turn (see worldbook.service.request_log)."""

    id: int
    at: datetime
    messages: int
    chat_length: int
    books: list[LogBookOut]
    budgets: dict[str, LogBudgetOut]
    injected: list[LogEntryOut] = Field(description="What went in, in render order, and why.")
    index: list[LogEntryOut]
    left_out: list[LogEntryOut] = Field(
        description="Classic entries activated but left out, and canon over budget."
    )
    notes: list[str]


class ChatLogOut(BaseModel):
    chat_id: str
    turns: list[LogTurnOut] = Field(description="Newest first.")


# --- turns: the request and response models are the service's (worldbook.service.contract) ---


class PrewarmRequest(Request):
    texts: list[str] = Field(min_length=1, max_length=16)


class ImportOut(BaseModel):
    book_id: str
    title: str
    entries: int
    format: str
    warnings: list[str]
    resumed: bool
