"""The wired parts of a worldbook process, built once from settings at an entry point.

The app factory, the CLI and the worker each build one :class:`Components` and pass it down;
nothing here runs at import time. Heavy parts (the embedding model) load on first use, so a
CLI command that never embeds never loads a model.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from worldbook.adapters.embedders.registry import load_embedder
from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.store import BookRecord, SqlStore, open_store
from worldbook.adapters.tokenizers.registry import canonical_tokenizer_id, get_tokenizer
from worldbook.core.matching import MatcherCache
from worldbook.core.types import SelectionRules
from worldbook.errors import QueueUnavailable, WorldbookError
from worldbook.ports import Embedder, IndexQueue
from worldbook.service.indexing import IndexReport, index_entries
from worldbook.service.lore_books import LoreBookCache
from worldbook.service.query_embeddings import QueryEmbeddings
from worldbook.service.token_counts import TokenCounter
from worldbook.service.usage_recorder import UsageRecorder
from worldbook.settings import WorldbookSettings

logger = logging.getLogger(__name__)


class Components:
    """Store, caches, embedder, vector index and indexing queue of one process.

    Args:
        settings: the process's settings.
        store: an already-open store (tests); default: open (and migrate) the configured one.
        embedder: an embedder instance (tests); default: the one ``settings.embedder`` names.
        start_queue: start the in-process indexer thread when no broker is configured.
    """

    def __init__(
        self,
        settings: WorldbookSettings,
        *,
        store: SqlStore | None = None,
        embedder: Embedder | None = None,
        start_queue: bool = True,
    ) -> None:
        self.settings = settings
        if store is None:
            if settings.database_url is None:
                settings.data_dir.mkdir(parents=True, exist_ok=True)
            store = open_store(settings.resolved_database_url())
        self.store: SqlStore = store
        self.rules: SelectionRules = settings.selection_rules()
        self.embedder: Embedder = embedder or load_embedder(
            settings.embedder,
            threads=settings.embed_threads,
            device=settings.embed_device,
            e5_engine=settings.e5_engine,
        )
        self.model_id = self.embedder.model_id
        self.vector_index = FaissIndex(
            lambda book_id: self.store.load_book_vectors(book_id, self.model_id),
            max_books=settings.index_cache_books,
        )
        self.query_embeddings = QueryEmbeddings(self.embedder)
        self.matcher_cache = MatcherCache(max_books=settings.index_cache_books)
        self.lore_books = LoreBookCache(self.store, max_books=settings.index_cache_books)
        self._counters: dict[str, TokenCounter] = {}
        self._index_versions: dict[str, int] = {}
        self._lock = threading.Lock()
        self.queue: IndexQueue = self._make_queue(start_queue)
        # Turns' usage is written by a background thread, off the turn path (usage_recorder.py).
        self.usage = UsageRecorder(self.store.add_usage_counts)

    # --- tokens ----------------------------------------------------------------------------
    def token_counter(self, tokenizer_id: str | None = None) -> TokenCounter:
        """The cached counter of a tokenizer (default: the settings' tokenizer)."""
        key = canonical_tokenizer_id(tokenizer_id or self.settings.tokenizer)
        with self._lock:
            counter = self._counters.get(key)
            if counter is None:
                tokenizer = get_tokenizer(key, tiktoken_dir=self.settings.tiktoken_dir)
                counter = TokenCounter(tokenizer, store=self.store)
                self._counters[key] = counter
            return counter

    # --- vectors ---------------------------------------------------------------------------
    def indexed_ids(self, book_id: str) -> frozenset[str]:
        """Entries of the book with a current vector of the active model."""
        return self.vector_index.indexed_entry_ids(book_id)

    def sync_vector_index(self, book: BookRecord) -> None:
        """Drop the cached vector index of a book whose vectors changed since it was built —
        possibly in another process (a Celery worker), which is why the version is compared."""
        with self._lock:
            seen = self._index_versions.get(book.id)
            self._index_versions[book.id] = book.index_version
        if seen is not None and seen != book.index_version:
            self.vector_index.invalidate(book.id)

    def index_now(
        self,
        entry_ids: Sequence[str] | None = None,
        *,
        book_id: str | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> IndexReport:
        """Embed in this process, now (``worldbook index --wait`` without a broker)."""
        return index_entries(
            entry_ids,
            store=self.store,
            embedder=self.embedder,
            batch_size=self.settings.index_batch_size,
            book_id=book_id,
            on_indexed=self._invalidate_books,
            on_progress=on_progress,
        )

    def _invalidate_books(self, book_ids: set[str]) -> None:
        for book_id in book_ids:
            self.vector_index.invalidate(book_id)

    # --- queue -----------------------------------------------------------------------------
    def _make_queue(self, start: bool) -> IndexQueue:
        if self.settings.broker_url:
            from worldbook.adapters.queues import CeleryIndexQueue

            return CeleryIndexQueue(self.settings.broker_url)
        from worldbook.adapters.queues import InProcessIndexQueue

        queue = InProcessIndexQueue(
            lambda ids: self.index_now(ids), batch_size=self.settings.index_batch_size
        )
        if start:
            queue.start()
        return queue

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

    def warm_up_in_background(self) -> threading.Thread:
        """Load the embedding model now, off the request path, so the first turn after a start
        does not pay for it (torch import, dequantising and packing: ~3.4 s for e5-small). A
        turn that arrives meanwhile waits for the same load (the embedder loads once, under a
        lock)."""

        def load() -> None:
            try:
                self.embedder.embed_queries(["warm-up"])
            except WorldbookError as exc:  # the first real turn reports it to its caller
                logger.warning("embedding model not loaded at start: %s", exc)

        thread = threading.Thread(target=load, name="worldbook-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        stop = getattr(self.queue, "stop", None) or getattr(self.queue, "close", None)
        if stop is not None:
            stop()
        self.usage.close()
        self.store.close()
