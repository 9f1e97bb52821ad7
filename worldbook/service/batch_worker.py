"""One daemon thread draining a queue in batches: what ``PrewarmQueue`` and ``UsageRecorder``
share (the thread's start on first use, its loop, and its stop).

Subclasses touch ``_queue`` only while holding ``_cond``, start the thread with
:meth:`_start_locked` after queueing, and say how a batch is taken (:meth:`_take`) and
handled (:meth:`_handle`, outside the lock). ``_busy`` counts the items taken and not yet
handled, so "nothing left to do" is ``not _queue and not _busy``.
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Generic, TypeVar

T = TypeVar("T")


class BatchWorker(Generic[T]):
    def __init__(self, thread_name: str) -> None:
        self._thread_name = thread_name
        self._queue: deque[T] = deque()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._busy = 0  # items taken by the worker and not yet handled

    def _start_locked(self) -> None:
        """Start the worker if it is not running yet (the caller holds ``_cond``)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._thread_name, daemon=True)
            self._thread.start()

    def _stop(self, timeout: float | None) -> None:
        """Drop what waits (:meth:`_dropped` hears how much) and stop the thread, after the
        batch in flight; later items are ignored."""
        with self._cond:
            self._stopping = True
            self._dropped(len(self._queue))
            self._queue.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _idle(self) -> bool:
        """Nothing waits and nothing is being handled (called holding ``_cond``)."""
        return not self._queue and not self._busy

    def _dropped(self, count: int) -> None:
        """``count`` queued items were dropped by :meth:`_stop` (called holding ``_cond``)."""

    def _gather(self) -> None:
        """Called holding ``_cond`` once something waits: may wait longer for a fuller batch."""

    def _take(self) -> list[T]:
        """The next batch, taken off ``_queue`` (called holding ``_cond``)."""
        raise NotImplementedError

    def _handle(self, batch: list[T]) -> None:
        """Do the work of one batch (outside the lock); an exception let through ends the thread."""
        raise NotImplementedError

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._queue or self._stopping)
                self._gather()
                if self._stopping:
                    return
                batch = self._take()
                self._busy = len(batch)
            try:
                self._handle(batch)
            finally:
                with self._cond:
                    self._busy = 0
                    self._cond.notify_all()
