"""The indexing sweep on a timer: at start and every ``interval_s``, in every deployment.

Entries left ``queued`` when a process stopped, messages lost while the broker was down and
entries stuck ``indexing`` after a worker died are all found by one query (no current vector of
the active model) and queued again (:func:`worldbook.service.indexing.sweep`). The embedded
server runs this thread itself; Celery workers run the same sweep from beat (on by default),
with a Redis lock so one sweep runs per interval however many workers beat.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from worldbook.errors import WorldbookError

logger = logging.getLogger(__name__)


class Sweeper:
    """Calls ``sweep()`` now and then every ``interval_s`` seconds on a daemon thread."""

    def __init__(self, sweep: Callable[[], int], interval_s: float) -> None:
        self._sweep = sweep
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.runs = 0
        self.queued = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="worldbook-sweep", daemon=True)
            self._thread.start()

    def close(self, timeout: float | None = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run_once(self) -> int:
        try:
            queued = self._sweep()
        except WorldbookError as exc:  # the next run tries again; nothing is lost meanwhile
            logger.warning("indexing sweep failed: %s", exc)
            return 0
        self.runs += 1
        self.queued += queued
        if queued:
            logger.info("indexing sweep queued %d entries", queued)
        return queued

    def _run(self) -> None:
        while not self._stop.is_set():
            self.run_once()
            self._stop.wait(self._interval)
