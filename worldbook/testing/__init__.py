"""Fakes of the ports, shipped in the package so the use cases can be tested without SQL,
FAISS, a model or a broker: :func:`fake_services` wires them into a
:class:`~worldbook.service.services.Services`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from worldbook.adapters.embedders.hashing import HashingEmbedder
from worldbook.ports import Embedder
from worldbook.service.services import Services
from worldbook.settings import WorldbookSettings
from worldbook.testing.fakes import (
    ImmediateUsage,
    RecordingQueue,
    StaticTokenizers,
    WordTokenizer,
)
from worldbook.testing.memory_store import InMemoryStore
from worldbook.testing.vector_index import BruteForceIndex

if TYPE_CHECKING:
    from worldbook.service.search_setup import SearchSetup

__all__ = [
    "BruteForceIndex",
    "HashingEmbedder",
    "ImmediateUsage",
    "InMemoryStore",
    "RecordingQueue",
    "StaticTokenizers",
    "WordTokenizer",
    "fake_services",
]


def fake_services(
    *,
    store: InMemoryStore | None = None,
    embedder: Embedder | None = None,
    index_on_enqueue: bool = True,
    **settings: Any,
) -> Services:
    """Services over the in-memory store, brute-force index, hashing embedder and word
    tokenizer. With ``index_on_enqueue`` entries are embedded as soon as they are queued."""
    from worldbook.service.gloss_view import GlossViews
    from worldbook.service.indexing import index_entries
    from worldbook.service.search_setup import search_setup

    memory = store or InMemoryStore()
    model = embedder or HashingEmbedder()
    config = WorldbookSettings(embedder="fake", tokenizer="fake:words", **settings)
    search = search_setup(config, model.model_id, memory)
    services: Services

    def index(ids: Sequence[str]) -> None:
        index_entries(ids, store=memory, embedder=model, on_indexed=services.invalidate_books)

    services = Services(
        config,
        store=memory,
        embedder=model,
        vector_index=BruteForceIndex(
            lambda book_id: memory.load_book_vectors(book_id, model.model_id),
            combination=search.combination,
            correction=search.correction,
            languages=search.languages,
        ),
        queue=RecordingQueue(index if index_on_enqueue else None),
        tokenizers=StaticTokenizers(),
        usage=ImmediateUsage(memory.add_usage_counts),
    )
    if config.glosses:
        services.glosses = GlossViews(
            _gloss_index(memory, model.model_id, search), config.gloss_margin
        )
    return services


def _gloss_index(
    memory: InMemoryStore, model_id: str, search: SearchSetup
) -> Callable[[str], BruteForceIndex]:
    """Per language, a brute-force gloss index (ADR 0023), built as the service's."""
    from worldbook.service.gloss_view import gloss_row_languages, gloss_rows_loader

    def make(language: str) -> BruteForceIndex:
        return BruteForceIndex(
            gloss_rows_loader(memory.load_book_vectors, model_id, language),
            combination=search.combination,
            correction=search.correction,
            languages=gloss_row_languages(search.languages, language),
        )

    return make
