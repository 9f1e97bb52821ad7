"""The Celery app of the indexing workers: ``celery -A workers.celery_app worker``.

:func:`make_celery` builds an app from settings. The module-level ``app`` that the ``celery``
command looks up is built on first access (PEP 562 ``__getattr__``), so importing this module —
or anything in ``worldbook`` — never reads the environment; settings are read when the worker
boots. The store and the embedder are opened lazily in each pool process on its first task,
after the fork, because database connections and BLAS thread pools must not cross a fork.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from celery import Celery, signals

from workers import observe
from workers.runtime import Indexer, build_indexer
from workers.tasks import register_tasks
from worldbook.adapters.queues import SWEEP_TASK, broker_options
from worldbook.errors import InvalidInput
from worldbook.settings import WorldbookSettings

IndexerFactory = Callable[[], Indexer]


def make_celery(
    settings: WorldbookSettings, *, indexer_factory: IndexerFactory | None = None
) -> Celery:
    """A Celery app for ``settings.broker_url`` with the indexing and sweep tasks registered.

    ``indexer_factory`` replaces :func:`build_indexer` (tests inject a slow embedder with it).

    Raises:
        InvalidInput: no broker URL is configured.
    """
    if not settings.broker_url:
        raise InvalidInput(
            "WORLDBOOK_BROKER_URL is not set; a Celery worker needs a Redis broker URL "
            "(without one, `worldbook serve` indexes in-process).",
            field="broker_url",
        )
    settings.data_dir.mkdir(parents=True, exist_ok=True)  # beat keeps its state file there
    app = Celery("worldbook")
    app.conf.update(broker_options(settings.broker_url))
    app.conf.update(
        # A task is acknowledged only after it finished, and a task whose worker process died
        # is put back: with idempotent tasks, re-running is always safe, losing one is not.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # Each process reserves one message at a time, so a slow batch does not hold others.
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        beat_schedule={
            "worldbook-sweep": {"task": SWEEP_TASK, "schedule": float(settings.sweep_interval_s)}
        },
        # Beat's small state file goes with the other local data, not the working directory.
        beat_schedule_filename=str(settings.data_dir / "celerybeat-schedule"),
    )
    processes = [1]

    def _remember_concurrency(sender: Any = None, **_: Any) -> None:
        # The pool size is only known once the worker starts (-c, or the CPU count); the pool
        # processes fork after this, so each inherits it and splits the cores accordingly.
        if getattr(sender, "app", None) is app and isinstance(sender.concurrency, int):
            processes[0] = sender.concurrency

    signals.worker_init.connect(_remember_concurrency, weak=False)

    def default_factory() -> Indexer:
        return build_indexer(settings, processes=processes[0])

    factory = indexer_factory or default_factory
    observe.connect(app)  # task outcomes as metrics, request ids in task logs (ADR 0018)
    register_tasks(
        app,
        _per_process(factory),
        broker_url=settings.broker_url,
        sweep_interval_s=settings.sweep_interval_s,
        stuck_after_s=settings.indexing_stuck_s,
    )
    return app


def _per_process(factory: IndexerFactory) -> IndexerFactory:
    """Build the indexer once per process, on first use (after the pool forked)."""
    lock = threading.Lock()
    built: list[Indexer] = []

    def get() -> Indexer:
        with lock:
            if not built:
                built.append(factory())
            return built[0]

    return get


_app: Celery | None = None


def __getattr__(name: str) -> Any:
    # `celery -A workers.celery_app` reads `app`; build it (and read settings) only then.
    global _app
    if name in ("app", "celery"):
        if _app is None:
            _app = make_celery(WorldbookSettings())
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
