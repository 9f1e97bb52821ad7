"""Thin Celery tasks: check the message, call the plain indexing functions, retry on outages.

Tasks carry entry ids only. Idempotency comes from the store (see
:mod:`worldbook.service.indexing`): an entry that already has a vector of the worker's model for
its current content hash is skipped, so a redelivered or duplicated message costs one query.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from worldbook.adapters.queues import GLOSS_TASK, INDEX_TASK, SWEEP_TASK, CeleryIndexQueue
from worldbook.errors import InvalidInput, NotFound, ServiceUnavailable
from worldbook.service import indexing

if TYPE_CHECKING:
    from celery import Celery

    from workers.runtime import Indexer

log = logging.getLogger(__name__)

MAX_IDS_PER_TASK = 1000
RETRY_BACKOFF_MAX_S = 300
MAX_RETRIES = 10


def parse_entry_ids(payload: object) -> list[str]:
    """The entry ids of a task message.

    Raises:
        InvalidInput: the payload is not a list of at most ``MAX_IDS_PER_TASK`` strings.
    """
    if not isinstance(payload, list) or not all(isinstance(x, str) for x in payload):
        raise InvalidInput("an index task takes a list of entry id strings.", field="entry_ids")
    if len(payload) > MAX_IDS_PER_TASK:
        raise InvalidInput(
            f"an index task takes at most {MAX_IDS_PER_TASK} entry ids; got {len(payload)}. "
            "Split the request.",
            field="entry_ids",
        )
    return list(payload)


# Options of both tasks: registered on this app only, acknowledged once run, and a database or
# model outage retried with exponential backoff (1 s, 2 s, 4 s, … capped).
_RETRIED_TASK: dict[str, Any] = {
    "shared": False,
    "acks_late": True,
    "autoretry_for": (ServiceUnavailable,),
    "retry_backoff": True,
    "retry_backoff_max": RETRY_BACKOFF_MAX_S,
}


def register_tasks(
    app: Celery,
    indexer: Callable[[], Indexer],
    *,
    broker_url: str,
    sweep_interval_s: int = 120,
    stuck_after_s: float = 300,
) -> None:
    """Register the index and sweep tasks on ``app``; ``indexer`` gives this process's Indexer."""
    queues: list[CeleryIndexQueue] = []

    @app.task(  # type: ignore[untyped-decorator]
        name=INDEX_TASK,
        reject_on_worker_lost=True,
        # Jittered; after MAX_RETRIES the entries stay queued for the sweep.
        retry_jitter=True,
        max_retries=MAX_RETRIES,
        **_RETRIED_TASK,
    )
    def index_entries_task(entry_ids: object) -> dict[str, Any]:
        ids = parse_entry_ids(entry_ids)
        ind = indexer()
        report = ind.run(ids)
        # With the id of the request that queued it (workers/observe.py): followable.
        log.info("indexed %d entries (%d stale)", len(report.indexed), len(report.stale))
        if ind.glosses is not None and report.books:
            try:  # ADR 0023: the glosses of the books with readers, as tasks of their own
                books = ind.gloss_books(report.books) if ind.gloss_books else sorted(report.books)
                if books:
                    sender().submit(books)
            except ServiceUnavailable as exc:  # the entries are indexed; `glosses write` catches up
                log.warning("glosses not queued: %s", exc)
        elif ind.gloss_vectors is not None and report.books:
            ind.gloss_vectors(report.books)  # no model: the stored glosses keep their vectors
        if report.failed:
            log.warning("indexing failed for %d entries: %s", len(report.failed), report.failed)
        return {"indexed": len(report.indexed), "stale": len(report.stale), "failed": report.failed}

    def sender() -> CeleryIndexQueue:
        if not queues:
            queues.append(CeleryIndexQueue(broker_url))
        return queues[0]

    register_gloss_task(app, indexer)

    @app.task(name=SWEEP_TASK, max_retries=3, **_RETRIED_TASK)  # type: ignore[untyped-decorator]
    def sweep_task() -> int:
        ind = indexer()
        queue = sender()
        # Every worker may run beat: the first to take the lock sweeps for this interval.
        if not queue.claim("sweep", ttl_s=max(1, sweep_interval_s - 1)):
            return 0
        queued = indexing.sweep(
            ind.store, queue, ind.embedder.model_id, stuck_after_s=stuck_after_s
        )
        if ind.aligned is not None:  # entries the aligned view lacks (ADR 0016)
            queued += indexing.sweep(ind.store, queue, ind.aligned.model_id)
        return queued


def register_gloss_task(app: Celery, indexer: Callable[[], Indexer]) -> None:
    """The task that writes one book's glosses (ADR 0023), queued by the index task."""

    @app.task(name=GLOSS_TASK, max_retries=3, **_RETRIED_TASK)  # type: ignore[untyped-decorator]
    def write_glosses_task(book_id: object) -> dict[str, Any]:
        if not isinstance(book_id, str):
            raise InvalidInput("a glosses task takes one book id string.", field="book_id")
        ind = indexer()
        if ind.glosses is None:
            return {"skipped": "no language model configured (WORLDBOOK_LLM_URL)"}
        try:
            report = ind.glosses(book_id)
        except NotFound:
            return {"skipped": "the book is gone"}
        log.info("glosses of book %s: %s", book_id, report.as_dict())
        return report.as_dict()
