"""The one-thread, newest-per-key background worker (ADR 0008)."""

from __future__ import annotations

import threading

from worldbook.runtime.background import LatestPerKey


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


def test_with_a_delay_work_waits_for_the_newest_submission_of_its_key() -> None:
    import time

    done: list[tuple[int, float]] = []
    # A delay far above the sleep, so a loaded machine oversleeping cannot let 1 run first.
    worker: LatestPerKey[str, int] = LatestPerKey(
        lambda v: done.append((v, time.monotonic())), name="test-worker", delay_s=1.0
    )
    first = time.monotonic()
    worker.submit("a", 1)
    time.sleep(0.1)
    last = time.monotonic()
    worker.submit("a", 2)  # within the delay: replaces 1 and restarts the wait
    assert worker.wait_idle(10)
    assert [v for v, _ in done] == [2]
    assert done[0][1] - last >= 1.0 and done[0][1] - first >= 1.1


def test_a_pause_waits_while_a_request_is_served_and_not_longer() -> None:
    import time

    from worldbook.runtime.background import Foreground

    gauge = Foreground(max_wait_s=5)
    started = time.monotonic()
    gauge.pause()  # nothing served: no wait
    assert time.monotonic() - started < 0.5

    resumed: list[float] = []
    with gauge.serving():

        def step_aside() -> None:
            gauge.pause()
            resumed.append(time.monotonic())

        thread = threading.Thread(target=step_aside)
        thread.start()
        time.sleep(0.2)
        assert not resumed  # still stepping aside
        ended = time.monotonic()
    thread.join(10)
    assert resumed and resumed[0] >= ended


def test_a_pause_gives_up_after_max_wait_so_background_work_ends_under_load() -> None:
    import time

    from worldbook.runtime.background import Foreground

    gauge = Foreground(max_wait_s=0.05)
    with gauge.serving():
        started = time.monotonic()
        gauge.pause()
        assert 0.04 <= time.monotonic() - started < 2
