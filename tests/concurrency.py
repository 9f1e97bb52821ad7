"""Concurrency tests' one way to start threads at the same moment."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_threads(count: int, work: Callable[[int], object]) -> list[BaseException]:
    """Run ``work(i)`` for ``i`` in ``range(count)``, one thread each, released together by a
    barrier; returns what they raised (the caller asserts on it)."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(count)

    def target(i: int) -> None:
        barrier.wait()
        try:
            work(i)
        except BaseException as exc:  # collected and asserted on by the caller
            errors.append(exc)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors
