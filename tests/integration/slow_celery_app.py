"""A Celery app for the crash test: the real tasks with a fake embedder that takes its time.

``celery -A tests.integration.slow_celery_app worker`` runs it. Each model call sleeps
``WORLDBOOK_TEST_EMBED_DELAY_S`` so the test can kill the worker in the middle of a batch.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from workers.celery_app import make_celery
from workers.runtime import Indexer
from worldbook.adapters.store import open_store
from worldbook.ports import Vectors
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder


class SlowEmbedder(HashingEmbedder):
    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self._delay_s = delay_s

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        time.sleep(self._delay_s)
        return super().embed_passages(texts)


def _indexer() -> Indexer:
    settings = WorldbookSettings()
    delay = float(os.environ.get("WORLDBOOK_TEST_EMBED_DELAY_S", "0.3"))
    return Indexer(
        store=open_store(settings.resolved_database_url()),
        embedder=SlowEmbedder(delay),
        batch_size=settings.index_batch_size,
    )


app = make_celery(WorldbookSettings(), indexer_factory=_indexer)
