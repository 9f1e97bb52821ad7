"""What a Celery worker process needs to index: a store and an embedder, bound together.

The API and the CLI wire indexing through :class:`worldbook.service.components.Components`; a
worker process needs only this much (no vector index, no query caches, no queue thread). The
indexing logic itself is in :mod:`worldbook.service.indexing` and takes plain ports.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from worldbook.errors import LLMNotConfigured
from worldbook.ports import Embedder, Store, VectorStore
from worldbook.service import indexing
from worldbook.service.glosses import (
    GlossReport,
    books_with_readers,
    embed_stored_glosses,
    write_book_glosses,
)
from worldbook.service.indexing import IndexReport

if TYPE_CHECKING:
    from worldbook.settings import WorldbookSettings

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Indexer:
    """A store and an embedder bound together: what a worker needs to run a batch."""

    store: VectorStore
    embedder: Embedder
    batch_size: int = 32
    on_indexed: Callable[[set[str]], None] | None = None
    aligned: Embedder | None = None  # the aligned view's embedder (ADR 0016)
    glosses: Callable[[str], GlossReport] | None = None  # a book's glosses (ADR 0023)
    # Without a model to write glosses: embeds the stored ones of these books lacking vectors.
    gloss_vectors: Callable[[Iterable[str]], int] | None = None
    # Which indexed books get a gloss task (those with reader languages); None: every one.
    gloss_books: Callable[[Iterable[str]], list[str]] | None = None

    def run(self, entry_ids: Sequence[str] | None, *, book_id: str | None = None) -> IndexReport:
        report = indexing.index_entries(
            entry_ids,
            store=self.store,
            embedder=self.embedder,
            batch_size=self.batch_size,
            book_id=book_id,
            on_indexed=self.on_indexed,
        )
        if self.aligned is not None:
            report.aligned = indexing.index_aligned(
                entry_ids,
                store=self.store,
                embedder=self.aligned,
                batch_size=self.batch_size,
                book_id=book_id,
                on_indexed=self.on_indexed,
            )
        return report


def embed_threads(settings: WorldbookSettings, processes: int = 1) -> int:
    """BLAS threads per embedding process: the configured count, else the cores shared out.

    Oversubscribing cores is catastrophic for these models (docs/design/semantic-search.md: USE
    with 4 threads on 2 cores ran 75x slower), so N worker processes get cores // N threads each.
    """
    if settings.embed_threads > 0:
        return settings.embed_threads
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores // max(1, processes))


def build_indexer(settings: WorldbookSettings, *, processes: int = 1) -> Indexer:
    """Open the configured store and load the configured embedder."""
    from worldbook.adapters.embedders import load_embedder
    from worldbook.adapters.embedders.registry import aligned_spec
    from worldbook.adapters.store import open_store

    store = open_store(settings.resolved_database_url())
    embedder = load_embedder(
        settings.embedder,
        threads=embed_threads(settings, processes),
        device=settings.embed_device,
        e5_engine=settings.e5_engine,
    )
    spec = aligned_spec(settings.aligned_embedder, settings.embedder)
    threads = embed_threads(settings, processes)
    aligned = load_embedder(spec, threads=threads) if spec is not None else None
    glosses = gloss_writer(settings, store, embedder)
    return Indexer(
        store=store,
        embedder=embedder,
        batch_size=settings.index_batch_size,
        aligned=aligned,
        glosses=glosses,
        gloss_books=partial(books_with_readers, store=store) if glosses else None,
        gloss_vectors=(
            partial(embed_stored_glosses, store=store, embedder=embedder)
            if settings.glosses
            else None
        ),
    )


def gloss_writer(
    settings: WorldbookSettings, store: Store, embedder: Embedder
) -> Callable[[str], GlossReport] | None:
    """The worker's gloss job for one book (ADR 0023); None without a language model."""
    if not settings.glosses or not settings.llm_url:
        return None
    from worldbook.adapters.llm import build_llm

    try:
        llm = build_llm(settings)
    except LLMNotConfigured as exc:  # indexing must not stop for the glosses' sake
        log.warning("glosses are not written: %s", exc.message)
        return None
    model = settings.llm_model or settings.llm_url
    return partial(write_book_glosses, store=store, llm=llm, embedder=embedder, model=model)
