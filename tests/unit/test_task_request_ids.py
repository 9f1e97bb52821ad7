"""The request id travels with the Celery tasks a request queues (ADR 0018)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from workers.observe import task_request_id
from worldbook.adapters.queues import REQUEST_ID_HEADER, CeleryIndexQueue
from worldbook.runtime import logs


def test_the_worker_reads_the_id_from_the_task_request() -> None:
    as_attribute = SimpleNamespace(request=SimpleNamespace(**{REQUEST_ID_HEADER: "r-1"}))
    assert task_request_id(as_attribute) == "r-1"
    in_headers = SimpleNamespace(request=SimpleNamespace(headers={REQUEST_ID_HEADER: "r-2"}))
    assert task_request_id(in_headers) == "r-2"
    assert task_request_id(SimpleNamespace(request=SimpleNamespace(headers=None))) is None


def test_the_queue_sends_the_current_request_id(monkeypatch: pytest.MonkeyPatch) -> None:
    queue = CeleryIndexQueue("redis://127.0.0.1:1/0")
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(queue._app, "send_task", lambda *a, **kw: sent.append(kw))
    token = logs.request_id_var.set("req-42")
    try:
        queue.enqueue(["e1", "e2"])
    finally:
        logs.request_id_var.reset(token)
    queue.enqueue(["e3"])  # outside a request: no header
    queue.close()
    assert sent[0]["headers"] == {REQUEST_ID_HEADER: "req-42"}
    assert sent[1]["headers"] is None


def test_request_ids_from_callers_are_checked() -> None:
    assert logs.request_id_from("abc-123") == "abc-123"
    made = logs.request_id_from("bad id\n")
    assert made != "bad id\n" and len(made) == 16
    assert len(logs.request_id_from("x" * 129)) == 16
