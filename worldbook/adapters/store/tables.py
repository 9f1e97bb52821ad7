"""The SQLModel tables: the schema's single source of truth (the Alembic revisions mirror it).

The store queries these tables through SQLAlchemy Core (``Row.__table__``) and hands out plain
records, never live ORM objects. Enum-like columns are short strings (no PostgreSQL ENUM types to
migrate); timestamps are timezone-aware UTC. A test asserts that the migrated schema equals this
metadata on SQLite and PostgreSQL.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import registry
from sqlmodel import Field, SQLModel

ID = 32  # secrets.token_urlsafe(16) is 22 characters; room to spare
USER_ID = 255


class _Base(SQLModel, registry=registry()):
    """Own registry, so worldbook's metadata holds only worldbook's tables."""


def _ts(nullable: bool = False) -> Any:
    return Field(sa_column=sa.Column(sa.DateTime(timezone=True), nullable=nullable))


def _json() -> Any:
    return Field(sa_column=sa.Column(sa.JSON(), nullable=False))


def _fk(target: str, *, primary_key: bool = False, index: bool = False) -> Any:
    return Field(
        sa_column=sa.Column(
            sa.String(ID if not target.startswith("users") else USER_ID),
            sa.ForeignKey(target, ondelete="CASCADE"),
            primary_key=primary_key,
            nullable=False,
            index=index,
        )
    )


class UserRow(_Base, table=True):
    __tablename__ = "users"
    id: str = Field(sa_column=sa.Column(sa.String(USER_ID), primary_key=True))
    created_at: datetime = _ts()


class ApiKeyRow(_Base, table=True):
    __tablename__ = "api_keys"
    id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    name: str = Field(sa_column=sa.Column(sa.String(200), nullable=False))
    secret_sha256: str = Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))
    prefix: str = Field(sa_column=sa.Column(sa.String(16), nullable=False, index=True))
    created_at: datetime = _ts()
    revoked_at: datetime | None = _ts(nullable=True)


class BookRow(_Base, table=True):
    __tablename__ = "books"
    __table_args__ = (sa.Index("ix_books_owner_deleted", "owner_id", "deleted_at"),)
    id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    owner_id: str = _fk("users.id")
    title: str = Field(sa_column=sa.Column(sa.String(120), nullable=False))
    description: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    tags: list[str] = _json()
    visibility: str = Field(sa_column=sa.Column(sa.String(16), nullable=False, index=True))
    mode: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    settings: dict[str, Any] = _json()
    extensions: dict[str, Any] = _json()
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    deleted_at: datetime | None = _ts(nullable=True)
    # Bumped on every change to the book or its entries (matcher caches key on it).
    version: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    # Bumped when stored vectors change (vector-index caches key on it, across replicas).
    index_version: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    # Kept exact under the book-row lock; the entries-per-book limit reads it.
    entry_count: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))


class BookTagRow(_Base, table=True):
    """Casefolded tags, one row each, so the library can filter by tag on any database."""

    __tablename__ = "book_tags"
    book_id: str = _fk("books.id", primary_key=True)
    tag: str = Field(sa_column=sa.Column(sa.String(50), primary_key=True, index=True))


class EntryRow(_Base, table=True):
    __tablename__ = "entries"
    __table_args__ = (sa.Index("ix_entries_book_position", "book_id", "position"),)
    id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    book_id: str = _fk("books.id")
    position: int = Field(sa_column=sa.Column(sa.BigInteger(), nullable=False))
    title: str = Field(sa_column=sa.Column(sa.String(100), nullable=False))
    lore: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    aliases: list[str] = _json()
    canon: bool = Field(sa_column=sa.Column(sa.Boolean(), nullable=False))
    enabled: bool = Field(sa_column=sa.Column(sa.Boolean(), nullable=False))
    comment: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    keys: list[str] = _json()
    secondary_keys: list[str] = _json()
    selective: bool = Field(sa_column=sa.Column(sa.Boolean(), nullable=False))
    selective_logic: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    constant: bool = Field(sa_column=sa.Column(sa.Boolean(), nullable=False))
    order: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    # NULL: the entry's order (classic.md §5 item 5; migration 0003).
    priority: int | None = Field(sa_column=sa.Column(sa.Integer(), nullable=True))
    role: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    whole_words: bool | None = Field(sa_column=sa.Column(sa.Boolean(), nullable=True))
    case_sensitive: bool | None = Field(sa_column=sa.Column(sa.Boolean(), nullable=True))
    probability: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    scan_depth: int | None = Field(sa_column=sa.Column(sa.Integer(), nullable=True))
    decorators: list[str] = _json()
    extensions: dict[str, Any] = _json()
    content_hash: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    index_status: str = Field(sa_column=sa.Column(sa.String(16), nullable=False, index=True))
    index_error: str | None = Field(sa_column=sa.Column(sa.Text(), nullable=True))
    created_at: datetime = _ts()
    updated_at: datetime = _ts()
    index_status_at: datetime | None = _ts(nullable=True)


class AttachmentRow(_Base, table=True):
    __tablename__ = "attachments"
    __table_args__ = (
        sa.UniqueConstraint(
            "attached_by", "target_kind", "target_id", "book_id", name="uq_attachments_owner_target"
        ),
        sa.Index(
            "ix_attachments_owner_target", "attached_by", "target_kind", "target_id", "position"
        ),
    )
    id: int | None = Field(sa_column=sa.Column(sa.Integer(), primary_key=True, autoincrement=True))
    target_kind: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    target_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    book_id: str = _fk("books.id", index=True)
    attached_by: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    position: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    created_at: datetime = _ts()


class EntryVectorRow(_Base, table=True):
    __tablename__ = "entry_vectors"
    __table_args__ = (sa.Index("ix_entry_vectors_model", "model_id", "entry_id"),)
    entry_id: str = _fk("entries.id", primary_key=True)
    model_id: str = Field(sa_column=sa.Column(sa.String(200), primary_key=True))
    chunk: int = Field(sa_column=sa.Column(sa.Integer(), primary_key=True))
    content_hash: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    dim: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    vector: bytes = Field(sa_column=sa.Column(sa.LargeBinary(), nullable=False))


class EntryUsageRow(_Base, table=True):
    __tablename__ = "entry_usage"
    entry_id: str = _fk("entries.id", primary_key=True)
    total: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    canon: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    whole_book: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    full: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    index: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    last_used_at: datetime | None = _ts(nullable=True)


class BookUsageRow(_Base, table=True):
    __tablename__ = "book_usage"
    book_id: str = _fk("books.id", primary_key=True)
    turns: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))


class BookUsageDayRow(_Base, table=True):
    """Served turns per book per UTC day (the usage chart, ADR 0015).

    No foreign key on purpose: the usage writer upserts these rows after updating
    ``book_usage`` in the same transaction and only for books whose ``book_usage`` row still
    exists, so a concurrent purge (which deletes ``book_usage`` first, then these rows) never
    deadlocks against the writer's foreign-key check on ``books``.
    """

    __tablename__ = "book_usage_days"
    book_id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    day: date = Field(sa_column=sa.Column(sa.Date(), primary_key=True))
    turns: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))


class TokenCountRow(_Base, table=True):
    __tablename__ = "token_counts"
    content_hash: str = Field(sa_column=sa.Column(sa.String(64), primary_key=True))
    tokenizer_id: str = Field(sa_column=sa.Column(sa.String(200), primary_key=True))
    tokens: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))


class ImportJobRow(_Base, table=True):
    __tablename__ = "import_jobs"
    __table_args__ = (sa.Index("ix_import_jobs_source", "owner_id", "source_sha256"),)
    id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    book_id: str = _fk("books.id")
    owner_id: str = _fk("users.id")
    source_sha256: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    total_entries: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    done_entries: int = Field(sa_column=sa.Column(sa.Integer(), nullable=False))
    status: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    created_at: datetime = _ts()
    updated_at: datetime = _ts()


class ChatStateRow(_Base, table=True):
    """A chat's classic state for one book (``book_state_to_json``), scoped by the acting user
    whose turns wrote it. No foreign key to the book: a row outliving its book is harmless, and
    a turn racing a purge must not fail; ``purge_book`` deletes the rows."""

    __tablename__ = "chat_state"
    owner_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), primary_key=True))
    chat_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), primary_key=True))
    book_id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True, index=True))
    state: dict[str, Any] = _json()
    updated_at: datetime = _ts()


class ChatLogRow(_Base, table=True):
    """The request log of a chat: one row per real turn, the newest N kept."""

    __tablename__ = "chat_log"
    __table_args__ = (sa.Index("ix_chat_log_chat", "owner_id", "chat_id", "id"),)
    id: int | None = Field(sa_column=sa.Column(sa.Integer(), primary_key=True, autoincrement=True))
    owner_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    chat_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    created_at: datetime = _ts()
    record: dict[str, Any] = _json()


# --- the living world (ADR 0006; migration 0004) ----------------------------------


class LoreWriteRow(_Base, table=True):
    """One living-world write (the write log). An append's text is its stored segment."""

    __tablename__ = "lore_writes"
    __table_args__ = (
        sa.UniqueConstraint("book_id", "call_key", name="uq_lore_writes_call"),
        sa.Index("ix_lore_writes_book_created", "book_id", "created_at"),
        sa.Index("ix_lore_writes_message", "chat_id", "message_id"),
        sa.Index("ix_lore_writes_entry", "entry_id"),
    )
    seq: int | None = Field(sa_column=sa.Column(sa.Integer(), primary_key=True, autoincrement=True))
    id: str = Field(sa_column=sa.Column(sa.String(ID), nullable=False, unique=True))
    book_id: str = _fk("books.id")
    chat_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    message_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    swipe: int | None = Field(sa_column=sa.Column(sa.Integer(), nullable=True))
    call_id: str = Field(sa_column=sa.Column(sa.String(USER_ID), nullable=False))
    call_key: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    arguments_sha: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    tool: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    effect: str = Field(sa_column=sa.Column(sa.String(16), nullable=False))
    # No foreign key: the log outlives the entry (deleted by a person, or in the trash).
    entry_id: str = Field(sa_column=sa.Column(sa.String(ID), nullable=False))
    entry_title: str = Field(sa_column=sa.Column(sa.String(100), nullable=False))
    text: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    created_at: datetime = _ts()
    undone_at: datetime | None = _ts(nullable=True)
    undo_reason: str | None = Field(sa_column=sa.Column(sa.String(16), nullable=True))
    edited_at: datetime | None = _ts(nullable=True)


class LivingEntryRow(_Base, table=True):
    """An entry the AI wrote to: its base text and what the last living write left."""

    __tablename__ = "living_entries"
    entry_id: str = _fk("entries.id", primary_key=True)
    book_id: str = _fk("books.id", index=True)
    base: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    lore_sha: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    fields_sha: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))


class EntryTrashRow(_Base, table=True):
    """An entry taken out of its book by undoing its create; restorable."""

    __tablename__ = "entry_trash"
    entry_id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    book_id: str = _fk("books.id", index=True)
    position: int = Field(sa_column=sa.Column(sa.BigInteger(), nullable=False))
    draft: dict[str, Any] = _json()
    created_at: datetime = _ts()
    trashed_at: datetime = _ts()
    write_id: str | None = Field(sa_column=sa.Column(sa.String(ID), nullable=True))


class ConnectionRow(_Base, table=True):
    """A proxy connection (ADR 0017): token stored hashed, upstream key sealed."""

    __tablename__ = "connections"
    id: str = Field(sa_column=sa.Column(sa.String(ID), primary_key=True))
    owner_id: str = _fk("users.id", index=True)
    secret_sha256: str = Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))
    prefix: str = Field(sa_column=sa.Column(sa.String(16), nullable=False, index=True))
    spec: dict[str, Any] = _json()
    upstream_key: str | None = Field(sa_column=sa.Column(sa.Text(), nullable=True))
    created_at: datetime = _ts()
    revoked_at: datetime | None = _ts(nullable=True)


class EntryGlossRow(_Base, table=True):
    """An entry's generated name and gist in one reader language (ADR 0023; migration 0008).

    Its own table, never the author's entries or aliases: a gloss is a view the app's model
    wrote. Current only while ``content_hash`` equals the entry's (as ``entry_vectors``)."""

    __tablename__ = "entry_glosses"
    entry_id: str = _fk("entries.id", primary_key=True)
    language: str = Field(sa_column=sa.Column(sa.String(8), primary_key=True))
    book_id: str = _fk("books.id", index=True)
    name: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    gist: str = Field(sa_column=sa.Column(sa.Text(), nullable=False))
    content_hash: str = Field(sa_column=sa.Column(sa.String(64), nullable=False))
    model: str = Field(sa_column=sa.Column(sa.String(255), nullable=False))
    created_at: datetime = _ts()


metadata: sa.MetaData = _Base.metadata


def table(row: type[SQLModel]) -> sa.Table:
    """The Core table of a row class (typed, for the query modules)."""
    found = row.__table__  # type: ignore[attr-defined]
    assert isinstance(found, sa.Table)
    return found


users = table(UserRow)
api_keys = table(ApiKeyRow)
books = table(BookRow)
book_tags = table(BookTagRow)
entries = table(EntryRow)
attachments = table(AttachmentRow)
entry_vectors = table(EntryVectorRow)
entry_usage = table(EntryUsageRow)
book_usage = table(BookUsageRow)
book_usage_days = table(BookUsageDayRow)
token_counts = table(TokenCountRow)
import_jobs = table(ImportJobRow)
chat_state = table(ChatStateRow)
chat_log = table(ChatLogRow)
lore_writes = table(LoreWriteRow)
living_entries = table(LivingEntryRow)
entry_trash = table(EntryTrashRow)
connections = table(ConnectionRow)
entry_glosses = table(EntryGlossRow)
