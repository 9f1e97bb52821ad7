"""What each use case needs, as small Protocols: a use case asks for the roles it uses, not the
whole :class:`~worldbook.service.services.Services` (which has every one of them, so callers
pass it unchanged; a test may pass anything smaller that has the roles).

The store's roles are :mod:`worldbook.ports.store`; the rest are the process-wide caches and
the ports of search and work.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from worldbook.core.types import SelectionRules
from worldbook.ports import (
    BookStore,
    ChatStore,
    Embedder,
    ImportStore,
    IndexedEntries,
    IndexQueue,
    KeyStore,
    UsageSink,
    UsageStore,
    VectorIndex,
    VectorStore,
    WriteStore,
)
from worldbook.settings import WorldbookSettings

if TYPE_CHECKING:
    from worldbook.core.records import BookRecord
    from worldbook.runtime.background import Foreground
    from worldbook.runtime.classic_cache import ClassicMatcherCache
    from worldbook.runtime.matcher_cache import MatcherCache
    from worldbook.service.aligned_view import AlignedView
    from worldbook.service.classic_books import ClassicBookCache
    from worldbook.service.gloss_view import GlossViews
    from worldbook.service.lore_books import LoreBookCache
    from worldbook.service.macro_books import MacroBooks
    from worldbook.service.query_embeddings import QueryEmbeddings
    from worldbook.service.token_counts import TokenCounter


class HasBooks(Protocol):
    @property
    def books(self) -> BookStore: ...


class HasSettings(Protocol):
    @property
    def settings(self) -> WorldbookSettings: ...


class BookEdits(HasBooks, Protocol):
    """Writes to books and entries, and the indexing they ask for."""

    def enqueue(self, entry_ids: Sequence[str]) -> None: ...


class Importing(BookEdits, HasSettings, Protocol):
    """Imports: books, entries, the resumable job, the importing user."""

    @property
    def imports(self) -> ImportStore: ...

    @property
    def keys(self) -> KeyStore: ...


class UsageReads(HasBooks, HasSettings, Protocol):
    """Usage statistics (this process's queued turns flushed first)."""

    @property
    def usage_counts(self) -> UsageStore: ...

    @property
    def usage(self) -> UsageSink: ...


class IndexReads(HasBooks, Protocol):
    """Where a book's indexing stands."""

    @property
    def vectors(self) -> VectorStore: ...

    @property
    def queue(self) -> IndexQueue: ...

    @property
    def model_id(self) -> str: ...


class Indexing(HasSettings, Protocol):
    """Embedding entries in this process."""

    @property
    def vectors(self) -> VectorStore: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def aligned(self) -> AlignedView | None: ...

    def invalidate_books(self, book_ids: set[str]) -> None: ...


class LoreViews(Protocol):
    """Books as a turn sees them: cached builds, token counts, macro views, index flags."""

    @property
    def rules(self) -> SelectionRules: ...

    @property
    def model_id(self) -> str: ...

    @property
    def lore_books(self) -> LoreBookCache: ...

    @property
    def macro_books(self) -> MacroBooks: ...

    @property
    def classic_books(self) -> ClassicBookCache: ...

    def token_counter(self, tokenizer_id: str | None = None) -> TokenCounter: ...

    def indexed_entries(self, book_id: str) -> IndexedEntries: ...

    def sync_vector_index(self, book: BookRecord) -> None: ...


class EntryListing(UsageReads, LoreViews, Protocol):
    """A book's entries with their use counts, token counts and index state."""


class Turns(HasBooks, HasSettings, LoreViews, Protocol):
    """One turn (DESIGN §2, §3): books, chats, views, caches, the search, usage."""

    @property
    def chats(self) -> ChatStore: ...

    @property
    def usage(self) -> UsageSink: ...

    @property
    def matcher_cache(self) -> MatcherCache: ...

    @property
    def vectors(self) -> VectorStore: ...

    @property
    def classic_matchers(self) -> ClassicMatcherCache: ...

    @property
    def query_embeddings(self) -> QueryEmbeddings: ...

    @property
    def vector_index(self) -> VectorIndex: ...

    @property
    def aligned(self) -> AlignedView | None: ...

    @property
    def glosses(self) -> GlossViews | None: ...

    @property
    def foreground(self) -> Foreground: ...


class Writing(BookEdits, HasSettings, Protocol):
    """The living world's writes and undo."""

    @property
    def writes(self) -> WriteStore: ...


class ChatLogReads(HasBooks, Protocol):
    """A chat's request log, as the reader may see it."""

    @property
    def chats(self) -> ChatStore: ...
