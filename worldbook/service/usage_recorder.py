"""Usage recording off the turn path (issue 6 item 5: "must not slow the turn path").

A real turn hands its usage — the turn's books and (entry id, via) pairs — to a
:class:`UsageRecorder` and returns at once; one background thread writes the turns to the store
in arrival order. Measured in benchmarks/bench_load.py: writing in-line added a whole write
transaction to every turn (SQLite's writer lock is shared with the indexer and other turns).

Consequences, written down in docs/decisions.d/api.md:
- counts are eventually consistent: a turn shows in the statistics once the thread wrote it,
  normally within milliseconds; readers in the same process call :meth:`flush` first, so a
  single-process deployment (and the tests) read their own writes;
- the backlog is bounded (``max_pending`` turns); beyond it turns are dropped from the
  statistics with a warning rather than growing memory without limit when the database is
  slower than the traffic. Analytics never fail or delay a turn.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Sequence
from typing import Protocol

from worldbook.errors import InvalidInput, WorldbookError

logger = logging.getLogger(__name__)

Use = tuple[str, str]  # (entry id, via)


class UsageSink(Protocol):
    def record_turn_usage(self, book_ids: Sequence[str], uses: Sequence[Use]) -> None: ...


class UsageRecorder:
    """Queue turns' usage and write it from one daemon thread (started on first use).

    Args:
        sink: where usage is written (the store).
        max_pending: turns held while the writer is behind; more are dropped (and counted).
    """

    def __init__(self, sink: UsageSink, *, max_pending: int = 10_000) -> None:
        if max_pending < 1:
            raise InvalidInput(f"max_pending must be ≥ 1; got {max_pending}.", field="max_pending")
        self._sink = sink
        self._max_pending = max_pending
        self._pending: deque[tuple[tuple[str, ...], tuple[Use, ...]]] = deque()
        self._cond = threading.Condition()
        self._writing = 0
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.dropped = 0
        self.failed = 0
        self.written = 0

    def record(self, book_ids: Sequence[str], uses: Sequence[Use]) -> None:
        """Queue one turn's usage; returns without touching the database."""
        with self._cond:
            if self._stopping:
                return
            if len(self._pending) >= self._max_pending:
                self.dropped += 1
                if self.dropped == 1 or self.dropped % 1000 == 0:
                    logger.warning("usage backlog full: %d turns not counted", self.dropped)
                return
            self._pending.append((tuple(book_ids), tuple(uses)))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="worldbook-usage", daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued turn is written; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._writing, timeout)

    def pending(self) -> int:
        with self._cond:
            return len(self._pending) + self._writing

    def close(self, timeout: float | None = 10.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds; the rest is dropped and
        counted), then stop the thread, so nothing is written after the store closes."""
        self.flush(timeout)
        with self._cond:
            self._stopping = True
            self.dropped += len(self._pending)
            self._pending.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._stopping)
                if self._stopping:
                    return
                book_ids, uses = self._pending.popleft()
                self._writing = 1
            try:
                self._sink.record_turn_usage(book_ids, uses)
                self.written += 1
            except WorldbookError as exc:
                # The turn was answered; a lost count is logged, never raised.
                self.failed += 1
                logger.warning("usage not recorded: %s", exc)
            except Exception:
                self.failed += 1
                logger.exception("usage not recorded (unexpected error)")
            finally:
                with self._cond:
                    self._writing = 0
                    self._cond.notify_all()
