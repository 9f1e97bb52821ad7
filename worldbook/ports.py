"""The small Protocols the service layer talks to; adapters implement them, fakes ship in
:mod:`worldbook.testing`.

Only plain data and numpy arrays cross these boundaries. Adapters translate their foreign
errors into :mod:`worldbook.errors` types before they leave.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from worldbook.core.drafts import BookDraft, EntryDraft
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
from worldbook.core.tokens import Tokenizer
from worldbook.core.types import IndexStatus, SemanticHit

__all__ = [
    "BookVectors",
    "Embedder",
    "IndexQueue",
    "IndexedEntries",
    "Position",
    "Store",
    "Tokenizer",
    "TokenizerSource",
    "UsageSink",
    "VectorIndex",
    "VectorLoader",
    "Vectors",
]

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one L2-normalised row per text."""


class BookVectors(NamedTuple):
    """A book's stored vectors of one model: one row per chunk, an entry's chunks together."""

    entry_ids: list[str]
    vectors: Vectors
    content_hashes: list[str] | None = None
    """Per row, the hash of the entry text the row was embedded from (what the store joins
    on). None only from loaders that vouch every row is current (tests, benchmarks)."""


VectorLoader = Callable[[str], "BookVectors | tuple[list[str], Vectors]"]
"""``loader(book_id)``: a book's current vectors, for an index to build from (a plain
``(entry ids, matrix)`` pair is accepted from loaders that vouch every row is current)."""


@dataclass(frozen=True, slots=True)
class IndexedEntries:
    """What one build of a book's vector index can score.

    ``hashes`` maps each entry with vectors to the hash of the text they were embedded from
    ("" when the loader gave none); ``build`` changes whenever the index is rebuilt, so a view
    of the book built from these flags can be cached under it.
    """

    hashes: Mapping[str, str]
    build: int

    def current(self, entry_id: str, content_hash: str) -> bool:
        """Whether the entry's vectors were embedded from this text: vectors of another
        version of an entry's text are never used (DESIGN §2 rule 6), also while an index
        built before an edit is still being served."""
        found = self.hashes.get(entry_id)
        return found is not None and found in ("", content_hash)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into normalised vectors. ``model_id`` is stored with every vector."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_passage_chars(self) -> int:
        """Lore longer than this is chunked so the model's input limit does not cut it."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed entry texts (title + aliases + lore) for storage."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed conversation messages for search."""
        ...

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (models load on first use; readiness reports it)."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-entry search over the current vectors of some books."""

    def search(self, book_ids: Sequence[str], queries: Vectors, k: int) -> list[SemanticHit]:
        """Best ``k`` entries over all ``book_ids`` for the combined queries, best first."""
        ...

    def invalidate(self, book_id: str) -> None:
        """The book's stored vectors changed: the next searches must see the new ones (an
        index may keep serving its previous build while the new one is made, since
        :meth:`indexed_entries` tells which entries that build may score)."""
        ...

    def indexed_entries(self, book_id: str) -> IndexedEntries:
        """The entries the book's searches score right now, with the text version of each."""
        ...


@runtime_checkable
class IndexQueue(Protocol):
    """Where entries wait to be embedded: Celery over Redis, or an in-process worker."""

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        """Ask for these entries to be indexed (idempotent; safe to call twice)."""
        ...

    def healthy(self) -> bool:
        """Whether work handed over now will be picked up."""
        ...

    def pending(self) -> int | None:
        """Ids waiting in this process (None when the queue lives elsewhere, e.g. a broker)."""
        ...

    def close(self) -> None:
        """Stop handing work over (after the batch in flight, for an in-process worker)."""
        ...


@runtime_checkable
class TokenizerSource(Protocol):
    """Tokenizers by id, restricted to what the operator configured (no file paths from
    requests: ``hf:<name>`` names a file listed in settings)."""

    @property
    def default_id(self) -> str:
        """The canonical id of the deployment's default tokenizer."""
        ...

    def canonical_id(self, tokenizer_id: str | None) -> str:
        """The id a loaded tokenizer reports; ``None`` means the default. Raises
        ``InvalidInput`` naming the accepted ids for an id that is not allowed."""
        ...

    def get(self, tokenizer_id: str | None) -> Tokenizer:
        """The tokenizer (loaded once); same errors as :meth:`canonical_id`."""
        ...


@runtime_checkable
class UsageSink(Protocol):
    """Where answered turns report which entries reached the model (written off the turn path)."""

    def record(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None: ...

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Write what is queued now (readers in this process then see their own turns)."""
        ...

    def close(self, timeout: float | None = 10.0) -> None: ...

    def pending(self) -> int:
        """Turns recorded but not written yet."""
        ...

    @property
    def dropped(self) -> int:
        """Turns whose usage was dropped (the writer was closing)."""
        ...


# --- Store ---------------------------------------------------------------------------------

Position = Target
"""Where entries go in a book's list: an end, or next to another entry of the same book."""


@runtime_checkable
class Store(Protocol):
    """Persistence of users, keys, books, entries, vectors and usage (``SqlStore``).

    Every method is one transaction and returns plain records; a rejected write changes
    nothing. Drafts are validated against :mod:`worldbook.core.limits` before anything is
    written. Ids of entries in another book are refused with ``EntryNotFound`` (no IDOR).
    """

    def close(self) -> None:
        """Release connections; the store is not used afterwards."""
        ...

    # users and API keys
    def ensure_user(self, user_id: str) -> None: ...
    def create_api_key(self, name: str) -> tuple[ApiKeyRecord, str]: ...
    def authenticate(self, plaintext: str) -> ApiKeyRecord | None: ...
    def revoke_api_key(self, key_id: str) -> ApiKeyRecord: ...
    def list_api_keys(self) -> list[ApiKeyRecord]: ...

    # books
    def create_book(self, owner_id: str, draft: BookDraft) -> BookRecord: ...
    def get_book(self, book_id: str, *, include_trashed: bool = False) -> BookRecord: ...
    def update_book(self, book_id: str, **changes: Any) -> BookRecord: ...
    def trash_book(self, book_id: str) -> BookRecord: ...
    def restore_book(self, book_id: str) -> BookRecord: ...
    def purge_book(self, book_id: str) -> None: ...
    def list_books(self, query: BookQuery) -> list[BookRecord]: ...
    def copy_book(self, book_id: str, new_owner_id: str) -> BookRecord: ...

    # entries and list order
    def add_entries(
        self,
        book_id: str,
        drafts: Sequence[EntryDraft],
        *,
        position: Position = "last",
        import_job_id: str | None = None,
    ) -> list[EntryRecord]: ...
    def get_entry(self, entry_id: str) -> EntryRecord: ...
    def entry_stamps(self, book_id: str) -> list[EntryStamp]: ...
    def get_entries(self, book_id: str, ids: Sequence[str]) -> list[EntryRecord]: ...
    def update_entry(self, entry_id: str, **changes: Any) -> EntryRecord: ...
    def delete_entries(self, book_id: str, ids: Sequence[str]) -> int: ...
    def list_entries(self, book_id: str, query: EntryQuery = ALL_ENTRIES) -> list[EntryRecord]: ...
    def set_enabled(self, book_id: str, ids: Sequence[str], enabled: bool) -> int: ...
    def entry_ids_not_in_book(self, book_id: str, ids: Sequence[str]) -> list[str]: ...
    def move_entries(self, book_id: str, ids: Sequence[str], *, to: Position) -> int: ...

    # attachments
    def attach(
        self, book_id: str, target_kind: TargetKind, target_id: str, attached_by: str
    ) -> AttachmentRecord: ...
    def detach(
        self, book_id: str, target_kind: TargetKind, target_id: str, owner_id: str
    ) -> bool: ...
    def attachments_for(
        self, target_kind: TargetKind, target_id: str, owner_id: str
    ) -> list[str]: ...

    # vectors and index status
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
    def entries_to_index(
        self, model_id: str, book_id: str | None = None, entry_ids: Sequence[str] | None = None
    ) -> list[EntryToIndex]: ...
    def book_index_share(self, book_id: str, model_id: str) -> float: ...
    def delete_vectors(self, model_id: str | None = None, book_id: str | None = None) -> int: ...

    # usage
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

    # token-count cache
    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]: ...
    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None: ...

    # resumable imports
    def create_import_job(
        self, book_id: str, owner_id: str, source_sha256: str, total_entries: int
    ) -> ImportJobRecord: ...
    def get_import_job(self, job_id: str) -> ImportJobRecord: ...
    def find_import_job(self, owner_id: str, source_sha256: str) -> ImportJobRecord | None: ...
    def advance_import_job(self, job_id: str, done_entries: int) -> ImportJobRecord: ...
    def finish_import_job(self, job_id: str, status: ImportStatus = "done") -> ImportJobRecord: ...

    # chats: classic chat state and the request log, scoped by the acting user (owner_id)
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

    # the living world (issue 12 item 2; rules in worldbook.core.living_ops)
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
