"""The one-thread, newest-per-key background worker (issue 13 item 3)."""

from __future__ import annotations

import threading

from worldbook.core.background import LatestPerKey


def test_a_newer_value_replaces_one_not_yet_started() -> None:
    started = threading.Event()
    release = threading.Event()
    done: list[tuple[str, int]] = []

    def work(value: tuple[str, int]) -> None:
        if value == ("a", 1):
            started.set()
            release.wait(10)
        done.append(value)

    worker: LatestPerKey[str, tuple[str, int]] = LatestPerKey(work, name="test-worker")
    worker.submit("a", ("a", 1))
    assert started.wait(10)
    # While ("a", 1) runs, three submissions for "a" collapse into the newest; "b" is its own.
    worker.submit("a", ("a", 2))
    worker.submit("b", ("b", 1))
    worker.submit("a", ("a", 3))
    release.set()
    assert worker.wait_idle(10)
    assert done[0] == ("a", 1)
    assert sorted(done[1:]) == [("a", 3), ("b", 1)]
    assert worker.failures == 0


def test_a_failing_job_is_counted_and_the_worker_goes_on() -> None:
    done: list[int] = []

    def work(value: int) -> None:
        if value < 0:
            raise ValueError("bad")
        done.append(value)

    worker: LatestPerKey[int, int] = LatestPerKey(work, name="test-worker")
    worker.submit(1, -1)
    assert worker.wait_idle(10)
    worker.submit(2, 2)
    assert worker.wait_idle(10)
    assert worker.failures == 1
    assert done == [2]


def test_wait_idle_without_work_returns_at_once() -> None:
    worker: LatestPerKey[int, int] = LatestPerKey(lambda _: None, name="test-worker")
    assert worker.wait_idle(0)
