"""A Celery app for the gloss task test: the real tasks, the fake embedder, and in place of the
model a gloss job that only records which book it was asked for.

``celery -A tests.integration.gloss_celery_app worker`` runs it. Each call of the gloss job
appends the book id as one line to ``WORLDBOOK_TEST_GLOSS_LOG``; with that variable unset the
indexer has no gloss job, as a worker without WORLDBOOK_LLM_URL.
"""

from __future__ import annotations

import os
from pathlib import Path

from workers.celery_app import make_celery
from workers.runtime import Indexer
from worldbook.adapters.store import open_store
from worldbook.service.glosses import GlossReport
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder


def record_glosses(book_id: str) -> GlossReport:
    with Path(os.environ["WORLDBOOK_TEST_GLOSS_LOG"]).open("a", encoding="utf-8") as log:
        log.write(book_id + "\n")
    return GlossReport(asked=1, written=1)


def _indexer() -> Indexer:
    settings = WorldbookSettings()
    return Indexer(
        store=open_store(settings.resolved_database_url()),
        embedder=HashingEmbedder(),
        batch_size=settings.index_batch_size,
        glosses=record_glosses if os.environ.get("WORLDBOOK_TEST_GLOSS_LOG") else None,
    )


app = make_celery(WorldbookSettings(), indexer_factory=_indexer)
