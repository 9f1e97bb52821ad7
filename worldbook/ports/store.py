"""The store, as the roles the use cases need (DESIGN §4 "Storage").

Each role is a small Protocol; a use case asks for the roles it uses (``worldbook.service.needs``)
and the caches ask for the reads they make (:class:`EntryReader`). :class:`Store` is every role
at once: what ``SqlStore`` and the in-memory fake (``worldbook.testing.InMemoryStore``)
implement, section by section in the same split (``adapters/store/*.py``,
``testing/memory_*.py``).

Every method is one transaction and returns plain records; a rejected write changes nothing.
Drafts are validated against :mod:`worldbook.core.limits` before anything is written. Ids of
entries in another book are refused with ``EntryNotFound`` (no IDOR).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable

from worldbook.core.connections import ConnectionRecord, ConnectionSpec
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.glosses import Gloss
from worldbook.core.living import (
    LivingLimits,
    TrashedEntry,
    UndoOutcome,
    UndoReason,
    WriteCall,
    WriteOutcome,
    WriteRecord,
)
from worldbook.core.ordering import Target
from worldbook.core.records import (
    ALL_ENTRIES,
    ApiKeyRecord,
    AttachmentRecord,
    BookQuery,
    BookRecord,
    ChatLogRecord,
    EntryQuery,
    EntryRecord,
    EntryStamp,
    EntryToIndex,
    EntryUsageRecord,
    ImportJobRecord,
    ImportStatus,
    TargetKind,
)
from worldbook.core.types import IndexStatus
from worldbook.ports.search import BookVectors, Vectors

Position = Target
"""Where entries go in a book's list: an end, or next to another entry of the same book."""


class EntryReader(Protocol):
    """The reads a cached book build makes: all entries, their stamps, some entries."""

    def list_entries(self, book_id: str, query: EntryQuery = ALL_ENTRIES) -> list[EntryRecord]: ...
    def entry_stamps(self, book_id: str) -> list[EntryStamp]: ...
    def get_entries(self, book_id: str, ids: Sequence[str]) -> list[EntryRecord]: ...


class BookStore(EntryReader, Protocol):
    """Books, their entries and list order, and attachments."""

    def create_book(self, owner_id: str, draft: BookDraft) -> BookRecord: ...
    def get_book(self, book_id: str, *, include_trashed: bool = False) -> BookRecord: ...
    def update_book(self, book_id: str, **changes: Any) -> BookRecord: ...
    def trash_book(self, book_id: str) -> BookRecord: ...
    def restore_book(self, book_id: str) -> BookRecord: ...
    def purge_book(self, book_id: str) -> None: ...
    def list_books(self, query: BookQuery) -> list[BookRecord]: ...
    def copy_book(self, book_id: str, new_owner_id: str) -> BookRecord: ...

    def add_entries(
        self,
        book_id: str,
        drafts: Sequence[EntryDraft],
        *,
        position: Position = "last",
        import_job_id: str | None = None,
    ) -> list[EntryRecord]: ...
    def get_entry(self, entry_id: str) -> EntryRecord: ...
    def update_entry(self, entry_id: str, **changes: Any) -> EntryRecord: ...
    def delete_entries(self, book_id: str, ids: Sequence[str]) -> int: ...
    def set_enabled(self, book_id: str, ids: Sequence[str], enabled: bool) -> int: ...
    def entry_ids_not_in_book(self, book_id: str, ids: Sequence[str]) -> list[str]: ...
    def move_entries(self, book_id: str, ids: Sequence[str], *, to: Position) -> int: ...

    def attach(
        self, book_id: str, target_kind: TargetKind, target_id: str, attached_by: str
    ) -> AttachmentRecord: ...
    def detach(
        self, book_id: str, target_kind: TargetKind, target_id: str, owner_id: str
    ) -> bool: ...
    def attachments_for(
        self, target_kind: TargetKind, target_id: str, owner_id: str
    ) -> list[str]: ...


class VectorStore(Protocol):
    """Entry vectors (per model id and text hash) and each entry's index state."""

    def save_vectors(
        self, entry_id: str, model_id: str, content_hash: str, vectors: Vectors
    ) -> bool: ...
    def save_vectors_many(
        self, model_id: str, items: Sequence[tuple[str, str, Vectors]]
    ) -> list[bool]: ...
    def load_book_vectors(self, book_id: str, model_id: str) -> BookVectors: ...
    def set_index_status(
        self, entry_ids: Sequence[str], status: IndexStatus, error: str | None = None
    ) -> None: ...
    def index_statuses(
        self, entry_ids: Sequence[str]
    ) -> dict[str, tuple[IndexStatus, str | None]]: ...
    def requeue_stuck(self, before: datetime) -> list[str]: ...
    def requeue_unindexed(self, model_id: str, entry_ids: Sequence[str]) -> int: ...
    def entries_to_index(
        self, model_id: str, book_id: str | None = None, entry_ids: Sequence[str] | None = None
    ) -> list[EntryToIndex]: ...
    def book_index_share(self, book_id: str, model_id: str) -> float: ...
    def delete_vectors(self, model_id: str | None = None, book_id: str | None = None) -> int: ...
    def index_overview(self) -> tuple[dict[str, int], datetime | None]:
        """Entries per index state, and when the longest-queued entry was queued (metrics)."""
        ...


class UsageStore(Protocol):
    """Which entries reached the model, per book and day."""

    def record_turn_usage(
        self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]
    ) -> None: ...
    def add_usage_counts(
        self, book_turns: Mapping[str, int], entry_counts: Mapping[str, Mapping[str, int]]
    ) -> None: ...
    def book_turns(self, book_id: str) -> int: ...
    def book_turns_by_day(self, book_id: str, since: date) -> dict[date, int]:
        """Served turns per UTC day on or after ``since`` (days without turns are absent)."""
        ...

    def entry_usage(self, book_id: str) -> dict[str, EntryUsageRecord]: ...
    def usage_alerts(self, book_id: str, min_turns: int) -> list[str]: ...


class TokenCountStore(Protocol):
    """The persistent level of the token-count cache (``service/token_counts.py``)."""

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        """Known counts for those of ``hashes`` that are stored (missing ones are absent)."""
        ...

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        """Store ``hash -> count`` pairs; an existing pair is left as it is."""
        ...


class ImportStore(Protocol):
    """Resumable imports: how far each import of a file got."""

    def create_import_job(
        self, book_id: str, owner_id: str, source_sha256: str, total_entries: int
    ) -> ImportJobRecord: ...
    def get_import_job(self, job_id: str) -> ImportJobRecord: ...
    def find_import_job(self, owner_id: str, source_sha256: str) -> ImportJobRecord | None: ...
    def finish_import_job(self, job_id: str, status: ImportStatus = "done") -> ImportJobRecord: ...


class ChatStore(Protocol):
    """Classic chat state and the request log, scoped by the acting user (``owner_id``)."""

    def chat_states(
        self, owner_id: str, chat_id: str, book_ids: Sequence[str]
    ) -> dict[str, dict[str, Any]]:
        """Each book's stored classic state in the chat (books without one left out)."""
        ...

    def record_chat_turn(
        self,
        owner_id: str,
        chat_id: str,
        *,
        states: Mapping[str, dict[str, Any] | None],
        log: dict[str, Any] | None,
        keep_log: int = 50,
    ) -> None:
        """One real turn's chat state (None/{} deletes a book's row) and request-log row,
        keeping the newest ``keep_log`` rows, in one transaction."""
        ...

    def chat_log(self, owner_id: str, chat_id: str, *, limit: int = 50) -> list[ChatLogRecord]:
        """The chat's logged turns, newest first."""
        ...


class KeyStore(Protocol):
    """Users and the API keys of calling apps."""

    def ensure_user(self, user_id: str) -> None: ...
    def create_api_key(self, name: str) -> tuple[ApiKeyRecord, str]: ...
    def authenticate(self, plaintext: str) -> ApiKeyRecord | None: ...
    def revoke_api_key(self, key_id: str) -> ApiKeyRecord: ...
    def list_api_keys(self) -> list[ApiKeyRecord]: ...


class ConnectionStore(Protocol):
    """Proxy connections (ADR 0017): tokens stored hashed, upstream keys sealed."""

    def create_connection(
        self, owner_id: str, spec: ConnectionSpec, sealed_key: str | None
    ) -> tuple[ConnectionRecord, str]: ...
    def authenticate_connection(
        self, plaintext: str
    ) -> tuple[ConnectionRecord, str | None] | None: ...
    def list_connections(self, owner_id: str) -> list[ConnectionRecord]: ...
    def rotate_connection(
        self, owner_id: str, connection_id: str
    ) -> tuple[ConnectionRecord, str]: ...
    def revoke_connection(self, owner_id: str, connection_id: str) -> ConnectionRecord: ...


class WriteStore(Protocol):
    """The living world's writes and the entry trash they use (rules in
    :mod:`worldbook.core.living_ops`)."""

    def record_write(
        self, call: WriteCall, *, limits: LivingLimits, at: datetime | None = None
    ) -> WriteOutcome:
        """Apply a tool call under the book's lock: replay by call, rate limit (429), create
        (or append to the entry its title names) or append; ``at`` defaults to now."""
        ...

    def get_write(self, write_id: str) -> WriteRecord: ...
    def undo_write(
        self, write_id: str, *, reason: UndoReason = "undo", at: datetime | None = None
    ) -> UndoOutcome:
        """Undo one write (idempotent); ``Conflict`` and no change when a person edited or
        deleted its entry since."""
        ...

    def list_writes(
        self, book_id: str, *, limit: int = 50, offset: int = 0
    ) -> list[WriteRecord]: ...
    def message_writes(
        self, owner_id: str, chat_id: str, message_id: str, swipe: int | None = None
    ) -> list[WriteRecord]: ...
    def list_entry_trash(self, book_id: str) -> list[TrashedEntry]: ...
    def get_trashed_entry(self, entry_id: str) -> TrashedEntry: ...
    def restore_entry(self, entry_id: str) -> EntryRecord: ...


class GlossStore(Protocol):
    """Glosses (ADR 0023): entries' generated names and gists in reader languages, in their own
    table, each current only while its content hash is the entry's."""

    def save_glosses(self, book_id: str, glosses: Sequence[Gloss]) -> int:
        """Upsert by (entry, language) in one transaction, skipping glosses whose entry is
        gone, in another book or edited since; returns how many were saved."""
        ...

    def book_glosses(self, book_id: str) -> list[Gloss]:
        """The book's current glosses, in list order then by language."""
        ...

    def delete_glosses(self, book_id: str, languages: Sequence[str] | None = None) -> int:
        """Delete the book's glosses (only ``languages`` when given); returns how many."""
        ...


@runtime_checkable
class Store(
    BookStore,
    VectorStore,
    UsageStore,
    TokenCountStore,
    ImportStore,
    ChatStore,
    KeyStore,
    WriteStore,
    ConnectionStore,
    GlossStore,
    Protocol,
):
    """Every role at once (``SqlStore``, ``InMemoryStore``)."""

    def close(self) -> None:
        """Release connections; the store is not used afterwards."""
        ...
