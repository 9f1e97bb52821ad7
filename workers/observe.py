"""What a Celery worker reports (ADR 0018): task outcomes and retries as metrics, and the id of
the request that queued a task on every log line the task writes.

The signal handlers run in the pool processes; with the worker's multiprocess metrics directory
(made by ``worldbook worker`` before the pool forks) every process's counts reach the worker's
own ``/metrics`` port.
"""

from __future__ import annotations

from contextvars import Token
from typing import Any

from celery import Celery, signals

from worldbook.adapters.queues import REQUEST_ID_HEADER
from worldbook.runtime import logs
from worldbook.runtime.metrics import metrics
from worldbook.runtime.metrics_dir import mark_exited


def task_request_id(task: Any) -> str | None:
    """The request id a task message carries (custom headers land on ``task.request``)."""
    request = getattr(task, "request", None)
    found = getattr(request, REQUEST_ID_HEADER, None)
    if found is None:
        found = (getattr(request, "headers", None) or {}).get(REQUEST_ID_HEADER)
    return found if isinstance(found, str) else None


def _name(sender: Any) -> str:
    return str(getattr(sender, "name", None) or "unknown")


def connect(app: Celery) -> None:
    """Connect this app's task signals to the metrics and the request-id context."""
    tokens: dict[str, Token[str | None]] = {}

    def ours(sender: Any) -> bool:
        return getattr(sender, "app", None) is app

    def prerun(sender: Any = None, task_id: str = "", task: Any = None, **_: Any) -> None:
        if ours(sender):
            rid = task_request_id(task)
            tokens[task_id] = logs.request_id_var.set(rid or f"task-{task_id[:16]}")

    def postrun(sender: Any = None, task_id: str = "", **_: Any) -> None:
        token = tokens.pop(task_id, None)
        if token is not None:
            logs.request_id_var.reset(token)

    def outcome(name: str) -> Any:
        def count(sender: Any = None, **_: Any) -> None:
            if ours(sender):
                metrics().tasks.labels(_name(sender), name).inc()

        return count

    def retried(sender: Any = None, **_: Any) -> None:
        if ours(sender):
            metrics().tasks.labels(_name(sender), "retry").inc()
            metrics().task_retries.labels(_name(sender)).inc()

    signals.task_prerun.connect(prerun, weak=False)
    signals.task_postrun.connect(postrun, weak=False)
    signals.task_success.connect(outcome("success"), weak=False)
    signals.task_failure.connect(outcome("failure"), weak=False)
    signals.task_retry.connect(retried, weak=False)
    signals.worker_process_shutdown.connect(
        lambda **_: mark_exited(metrics().directory), weak=False
    )
