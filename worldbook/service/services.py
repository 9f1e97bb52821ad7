"""What the use cases work with: the ports, the process-wide caches, the rules and settings.

Every collaborator here is typed by its port (:mod:`worldbook.ports`), never by an adapter:
:class:`~worldbook.service.components.Components` (the composition root) builds the SQL store,
FAISS index, embedder and queue from settings and hands them over; tests hand over the
in-memory fakes of :mod:`worldbook.testing` instead, so turns, the library and importing run
without SQL, FAISS or a model.

The caches are pure (:mod:`worldbook.runtime.lru`) and keyed by versions and content hashes, so
they are never stale — see ``docs/decisions.md`` "Cross-process cache coherence by versions".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from worldbook.core.records import BookRecord
from worldbook.core.types import SelectionRules
from worldbook.errors import QueueUnavailable
from worldbook.ports import (
    BookStore,
    ChatStore,
    Embedder,
    GlossQueue,
    ImportStore,
    IndexedEntries,
    IndexQueue,
    KeyStore,
    Store,
    TokenizerSource,
    UsageSink,
    UsageStore,
    VectorIndex,
    VectorStore,
    WriteStore,
)
from worldbook.runtime.background import Foreground
from worldbook.runtime.classic_cache import ClassicMatcherCache
from worldbook.runtime.matcher_cache import MatcherCache
from worldbook.service.aligned_view import AlignedView
from worldbook.service.classic_books import ClassicBookCache
from worldbook.service.gloss_view import GlossViews
from worldbook.service.lore_books import LoreBookCache
from worldbook.service.macro_books import MacroBooks
from worldbook.service.prewarm import PrewarmQueue
from worldbook.service.query_embeddings import QueryEmbeddings
from worldbook.service.token_counts import TokenCounter
from worldbook.settings import WorldbookSettings

logger = logging.getLogger(__name__)


class Services:
    """The ports and shared state of one process (thread-safe; one per process).

    Args:
        settings: the process's settings (read, never changed).
        store, embedder, vector_index, queue, tokenizers, usage: the ports.
        aligned: the cross-lingually aligned second view (ADR 0016); None: the primary alone.
        glosses: the gloss views of the readers' languages (ADR 0023); None: not searched.
        gloss_queue: where books wait for their glosses; None: no model writes them.
    """

    def __init__(
        self,
        settings: WorldbookSettings,
        *,
        store: Store,
        embedder: Embedder,
        vector_index: VectorIndex,
        queue: IndexQueue,
        tokenizers: TokenizerSource,
        usage: UsageSink,
        aligned: AlignedView | None = None,
        glosses: GlossViews | None = None,
        gloss_queue: GlossQueue | None = None,
    ) -> None:
        self.settings = settings
        self.rules: SelectionRules = settings.selection_rules()
        self.store = store  # every role: for the composition root (closing, the workers)
        # The store's roles (worldbook.ports.store): what the use cases ask for.
        self.books: BookStore = store
        self.vectors: VectorStore = store
        self.usage_counts: UsageStore = store
        self.imports: ImportStore = store
        self.chats: ChatStore = store
        self.keys: KeyStore = store
        self.writes: WriteStore = store
        self.embedder = embedder
        self.vector_index = vector_index
        self.aligned = aligned
        self.glosses = glosses
        self.gloss_queue = gloss_queue
        self.queue = queue
        self.tokenizers = tokenizers
        self.usage = usage
        self.query_embeddings = QueryEmbeddings(embedder, max_query_chars=settings.max_query_chars)
        self.prewarm = PrewarmQueue(self.query_embeddings.prewarm)
        # In a service process a new book version is answered by an overlay matcher while the
        # full automaton is built in the background (ADR 0008: no turn pays for an edit).
        # Turns in flight: background rebuilds step aside for them (core/background.py).
        self.foreground = Foreground()
        self.matcher_cache = MatcherCache(
            max_books=settings.index_cache_books, background=True, foreground=self.foreground
        )
        self.lore_books = LoreBookCache(store, max_books=settings.index_cache_books)
        self.macro_books = MacroBooks()  # books with {{char}}/{{user}} filled in (ADR 0012)
        self.classic_books = ClassicBookCache(store, max_books=settings.index_cache_books)
        self.classic_matchers = ClassicMatcherCache(max_books=settings.index_cache_books)
        self._counters: dict[str, TokenCounter] = {}
        self._index_versions: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """The active embedding model (part of every stored and searched vector)."""
        return self.embedder.model_id

    def token_counter(self, tokenizer_id: str | None = None) -> TokenCounter:
        """The cached counter of a tokenizer the deployment offers (default: the settings')."""
        key = self.tokenizers.canonical_id(tokenizer_id)
        with self._lock:
            counter = self._counters.get(key)
        if counter is not None:
            return counter
        # Loading happens outside the lock: one slow tokenizer file must not stall turns.
        made = TokenCounter(self.tokenizers.get(key), store=self.store)
        with self._lock:
            return self._counters.setdefault(key, made)

    def indexed_entries(self, book_id: str) -> IndexedEntries:
        """The book's entries its searches score now, with the text version of each."""
        return self.vector_index.indexed_entries(book_id)

    def sync_vector_index(self, book: BookRecord) -> None:
        """Drop the cached vector index of a book whose vectors changed since it was built —
        possibly in another process (a Celery worker), which is why the version is compared."""
        with self._lock:
            seen = self._index_versions.get(book.id)
            self._index_versions[book.id] = book.index_version
        if seen is not None and seen != book.index_version:
            self.invalidate_books({book.id})

    def invalidate_books(self, book_ids: set[str]) -> None:
        """Forget the vector indexes of books whose vectors were just saved here."""
        for book_id in book_ids:
            self.vector_index.invalidate(book_id)
            if self.aligned is not None:
                self.aligned.index.invalidate(book_id)
            if self.glosses is not None:
                self.glosses.invalidate(book_id)

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        """Hand entries to the indexer; a broker outage is logged, the sweep catches up."""
        if not entry_ids:
            return
        try:
            self.queue.enqueue(list(entry_ids))
        except QueueUnavailable as exc:
            # The write that asked for indexing already succeeded; the periodic sweep finds
            # the unindexed entries once the broker is back (DESIGN §4 "Queue").
            logger.warning("indexing not queued, the sweep will retry: %s", exc)
