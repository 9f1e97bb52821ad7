"""The in-process indexing queue and the Celery sender's failure translation (no services)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from worldbook.adapters.queues import CeleryIndexQueue, InProcessIndexQueue
from worldbook.errors import QueueUnavailable, StorageUnavailable


class Recorder:
    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self, ids: Sequence[str]) -> None:
        self.gate.wait(5)
        self.batches.append(list(ids))


def test_drains_in_request_order_in_batches() -> None:
    rec = Recorder()
    queue = InProcessIndexQueue(rec, batch_size=3)
    queue.enqueue(["a", "b", "c", "d"])
    queue.enqueue(["e"])
    assert queue.pending() == 5  # not started: only collects
    queue.start()
    try:
        assert queue.wait_idle(timeout=5)
    finally:
        queue.stop()
    assert rec.batches == [["a", "b", "c"], ["d", "e"]]


def test_an_id_requested_twice_while_waiting_runs_once() -> None:
    rec = Recorder()
    queue = InProcessIndexQueue(rec, batch_size=10)
    queue.enqueue(["a", "b"])
    queue.enqueue(["b", "a", "c"])
    queue.start()
    try:
        assert queue.wait_idle(timeout=5)
    finally:
        queue.stop()
    assert rec.batches == [["a", "b", "c"]]


def test_an_outage_puts_the_batch_back_and_retries() -> None:
    calls: list[list[str]] = []

    def flaky(ids: Sequence[str]) -> None:
        calls.append(list(ids))
        if len(calls) == 1:
            raise StorageUnavailable("database down")

    queue = InProcessIndexQueue(flaky, batch_size=10, backoff_s=0.01)
    queue.enqueue(["a", "b"])
    queue.start()
    try:
        assert queue.wait_idle(timeout=5)
    finally:
        queue.stop()
    assert calls == [["a", "b"], ["a", "b"]]


def test_a_bug_in_one_batch_does_not_kill_the_worker() -> None:
    seen: list[list[str]] = []

    def buggy(ids: Sequence[str]) -> None:
        seen.append(list(ids))
        if ids[0] == "bad":
            raise RuntimeError("boom")

    queue = InProcessIndexQueue(buggy, batch_size=1)
    queue.start()
    try:
        queue.enqueue(["bad"])
        assert queue.wait_idle(timeout=5)
        queue.enqueue(["good"])
        assert queue.wait_idle(timeout=5)
        assert queue.healthy()
    finally:
        queue.stop()
    assert seen == [["bad"], ["good"]]
    assert not queue.healthy()


def test_wait_idle_times_out_while_a_batch_runs() -> None:
    rec = Recorder()
    rec.gate.clear()
    queue = InProcessIndexQueue(rec)
    queue.start()
    try:
        queue.enqueue(["a"])
        assert not queue.wait_idle(timeout=0.05)
        rec.gate.set()
        assert queue.wait_idle(timeout=5)
    finally:
        queue.stop()


def test_celery_sender_fails_fast_with_queue_unavailable() -> None:
    # A closed local port: the connection is refused at once; the send must not retry for ever.
    queue = CeleryIndexQueue("redis://127.0.0.1:9/0", connect_timeout_s=0.5)
    with pytest.raises(QueueUnavailable) as info:
        queue.enqueue(["a"])
    assert "WORLDBOOK_BROKER_URL" in info.value.message
    assert not queue.healthy()
    queue.close()
