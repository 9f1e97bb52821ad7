"""The composition root: builds a process's adapters from settings and owns their lifecycle.

The app factory, every CLI command and the worker build one :class:`Components` and pass its
:attr:`~Components.services` (typed by ports only) to the use cases. Nothing here runs at
import time, and nothing here is logic: heavy parts (the embedding model) load on first use, so
a CLI command that never embeds never loads a model.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Sequence

from worldbook.adapters.embedders.batching import BatchingEmbedder
from worldbook.adapters.embedders.registry import aligned_spec, load_embedder
from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.queues import CeleryIndexQueue, InProcessIndexQueue
from worldbook.adapters.store import open_store
from worldbook.adapters.tokenizers.registry import TokenizerRegistry
from worldbook.core.query import Method, QueryCombination
from worldbook.errors import WorldbookError
from worldbook.llm_port import LLM
from worldbook.ports import Embedder, GlossQueue, IndexQueue, Store
from worldbook.service.aligned_view import AlignedView
from worldbook.service.gloss_view import GlossViews, gloss_row_languages, gloss_rows_loader
from worldbook.service.glosses import BookGlossWriter, GlossReport, write_book_glosses
from worldbook.service.indexing import index_now, sweep
from worldbook.service.search_setup import search_setup
from worldbook.service.services import Services
from worldbook.service.sweeper import Sweeper
from worldbook.service.usage_recorder import UsageRecorder
from worldbook.settings import WorldbookSettings

logger = logging.getLogger(__name__)


class Components:
    """Wires store, embedder, vector index, queue, tokenizers and usage recorder.

    Args:
        settings: the process's settings.
        store: an already-open store (tests; may be the in-memory fake); default: open (and
            migrate) the configured database.
        embedder: an embedder instance (tests); default: the one ``settings.embedder`` names.
        start_queue: start the in-process indexer thread when no broker is configured.
        trusted: the caller is the operator (CLI): requests may name tokenizer files by path.
        aligned: the aligned view's embedder (tests, benchmarks); default: the one
            ``settings.aligned_embedder`` names — none when the caller hands ``embedder``.
    """

    def __init__(
        self,
        settings: WorldbookSettings,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        start_queue: bool = True,
        trusted: bool = False,
        aligned: Embedder | None = None,
    ) -> None:
        self.settings = settings
        self._llm_client: LLM | None = None
        self._llm_lock = threading.Lock()
        # A process-wide knob, set here because this is every entry point's composition root:
        # background rebuilds must not convoy the turns (see the setting's description).
        sys.setswitchinterval(settings.gil_switch_interval_ms / 1000)
        if store is None:
            if settings.database_url is None:
                settings.data_dir.mkdir(parents=True, exist_ok=True)
            store = open_store(settings.resolved_database_url())
        # Only an embedder made here is closed here; a caller's may serve other components.
        self._own_embedder = embedder is None
        embedder = embedder or load_embedder(
            settings.embedder,
            threads=settings.embed_threads,
            device=settings.embed_device,
            e5_engine=settings.e5_engine,
            # Concurrent turns' new messages share one model call (ADR 0004).
            batch_max=settings.embed_batch_max,
            batch_wait_ms=settings.embed_batch_wait_ms,
        )
        if aligned is None and self._own_embedder:
            aligned = _aligned_embedder(settings)
        queue = self._make_queue()
        self.services = Services(
            settings,
            store=store,
            embedder=embedder,
            vector_index=_vector_index(settings, store, embedder.model_id),
            queue=queue,
            tokenizers=TokenizerRegistry(
                default=settings.tokenizer,
                tiktoken_dir=settings.tiktoken_dir,
                named_files=settings.hf_tokenizers,
                allow_paths=trusted,
            ),
            # Turns' usage is written by a background thread, off the turn path.
            usage=UsageRecorder(store.add_usage_counts),
            aligned=_aligned_view(settings, store, aligned),
            glosses=_gloss_views(settings, store, embedder.model_id),
            gloss_queue=self._gloss_queue(settings, queue),
        )
        self.gloss_jobs = self._gloss_jobs(settings, queue)
        # The embedded server indexes in this process: it also sweeps, at start (entries left
        # queued at the last shutdown) and then periodically. Celery workers sweep from beat.
        self.sweeper: Sweeper | None = None
        if start_queue and isinstance(queue, InProcessIndexQueue):
            queue.start()
            self.sweeper = Sweeper(self._sweep, settings.sweep_interval_s)
            self.sweeper.start()

    def _sweep(self) -> int:
        services = self.services
        queued = sweep(
            services.store,
            services.queue,
            services.model_id,
            stuck_after_s=self.settings.indexing_stuck_s,
        )
        if services.aligned is not None:  # entries the aligned view lacks (ADR 0016)
            queued += sweep(services.store, services.queue, services.aligned.model_id)
        return queued

    def _make_queue(self) -> IndexQueue:
        if self.settings.broker_url:
            return CeleryIndexQueue(self.settings.broker_url)
        # The worker runs index_now on this process's services (bound once they exist).
        return InProcessIndexQueue(self._index, batch_size=self.settings.index_batch_size)

    def _index(self, entry_ids: Sequence[str]) -> None:
        """The in-process worker's job: index, then hand the indexed books to the gloss jobs."""
        report = index_now(self.services, entry_ids)
        if report.books and self.gloss_jobs is not None:
            self.gloss_jobs.submit(report.books)

    def _gloss_queue(self, settings: WorldbookSettings, queue: IndexQueue) -> GlossQueue | None:
        """Where books wait for their glosses (ADR 0023): none without a language model; the
        Celery workers with a broker; else a writer thread of this process."""
        if not settings.glosses or not settings.llm_url:
            return None
        if isinstance(queue, CeleryIndexQueue):
            return queue
        return self._gloss_writer(settings.llm_model or settings.llm_url)

    def _gloss_jobs(self, settings: WorldbookSettings, queue: IndexQueue) -> GlossQueue | None:
        """What in-process indexing hands its books to (ADR 0023): the gloss writer, or without
        a model one that only embeds the stored glosses lacking vectors (after a new embedder
        or a rebuild); None when glosses are off or the Celery workers index."""
        if not settings.glosses or not isinstance(queue, InProcessIndexQueue):
            return None
        return self.services.gloss_queue or self._gloss_writer(None)

    def _gloss_writer(self, model: str | None) -> BookGlossWriter:
        """A writer thread of this process: with ``model`` (its name) it asks the app's model
        for the missing glosses; with None it only embeds the stored ones lacking vectors."""

        def write(book_id: str) -> GlossReport:
            services = self.services
            return write_book_glosses(
                book_id,
                store=services.store,
                llm=self._llm() if model is not None else None,
                embedder=services.embedder,
                model=model or "",
                on_saved=services.invalidate_books,
            )

        return BookGlossWriter(write)

    def _llm(self) -> LLM | None:
        """The app's model, made on first use (its adapter opens an HTTP client)."""
        from worldbook.adapters.llm import build_llm  # an HTTP client: only when glosses run

        with self._llm_lock:
            if self._llm_client is None:
                self._llm_client = build_llm(self.settings)
            return self._llm_client

    def warm_up_in_background(self) -> threading.Thread:
        """Load the embedding model now, off the request path, so the first turn after a start
        does not pay for it (torch import, dequantising and packing: ~3.4 s for e5-small). A
        turn that arrives meanwhile waits for the same load (the embedder loads once, under a
        lock)."""
        embedder = self.services.embedder

        aligned = self.services.aligned

        def load() -> None:
            try:
                embedder.embed_queries(["warm-up"])
                if aligned is not None:
                    aligned.embedder.embed_queries(["warm-up"])
            except WorldbookError as exc:  # the first real turn reports it to its caller
                logger.warning("embedding model not loaded at start: %s", exc)

        thread = threading.Thread(target=load, name="worldbook-warm-up", daemon=True)
        thread.start()
        return thread

    def close(self) -> None:
        """Stop the indexer, write queued usage, release the database and the model thread."""
        services = self.services
        if self.sweeper is not None:
            self.sweeper.close()
        services.prewarm.close()
        services.queue.close()
        services.usage.close()
        services.store.close()
        if self._llm_client is not None:  # the gloss writer's (ADR 0023)
            from worldbook.adapters.llm import close_llm

            close_llm(self._llm_client)
        if self._own_embedder and isinstance(services.embedder, BatchingEmbedder):
            services.embedder.close()


def _vector_index(settings: WorldbookSettings, store: Store, model_id: str) -> FaissIndex:
    search = search_setup(settings, model_id, store)
    return FaissIndex(
        lambda book_id: store.load_book_vectors(book_id, model_id),
        max_books=settings.index_cache_books,
        combination=search.combination,
        correction=search.correction,
        languages=search.languages,
        # After an edit the previous build serves (its text hashes keep edited entries out)
        # while the new one is made off the turn path (ADR 0008).
        background=True,
    )


def _gloss_views(settings: WorldbookSettings, store: Store, model_id: str) -> GlossViews | None:
    """The readers' languages' gloss views (ADR 0023): per language, an index over the books'
    own rows and that language's gloss rows, scored like the primary's."""
    if not settings.glosses:
        return None
    search = search_setup(settings, model_id, store)

    def make_index(language: str) -> FaissIndex:
        return FaissIndex(
            gloss_rows_loader(store.load_book_vectors, model_id, language),
            max_books=settings.index_cache_books,
            combination=search.combination,
            correction=search.correction,
            languages=gloss_row_languages(search.languages, language),
            background=True,
        )

    return GlossViews(make_index, settings.gloss_margin)


def _aligned_embedder(settings: WorldbookSettings) -> Embedder | None:
    spec = aligned_spec(settings.aligned_embedder, settings.embedder)
    if spec is None:
        return None
    return load_embedder(spec, threads=settings.embed_threads, device=settings.embed_device)


def _aligned_view(
    settings: WorldbookSettings, store: Store, embedder: Embedder | None
) -> AlignedView | None:
    """The aligned second view (ADR 0016): its own vector index over its model's stored
    vectors, raw (the language correction is fitted to the primary model)."""
    if embedder is None:
        return None
    model_id = embedder.model_id
    index = FaissIndex(
        lambda book_id: store.load_book_vectors(book_id, model_id),
        max_books=settings.index_cache_books,
        combination=QueryCombination(Method.CENTRED_RECENCY_MAX, settings.query_recency_decay),
        background=True,
    )
    return AlignedView(
        embedder,
        index,
        weight=settings.aligned_weight,
        cross_weight=settings.aligned_cross_weight,
    )
