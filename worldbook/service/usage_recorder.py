"""Usage recording off the turn path (ADR 0015: it must not slow the turn path).

A real turn hands its usage — the turn's books and (entry id, via) pairs — to a
:class:`UsageRecorder` and returns at once. One background thread waits ``write_interval``
seconds after the first turn it sees, takes *every* turn queued by then, sums them (per-book turn
counts, per-entry per-via counts; inside one turn an entry counts once, first via wins, as in
``SqlStore.record_turn_usage``) and writes the sums in one transaction: at most a few writes a
second whatever the turn rate. Writing after every turn cost the next turns their CPU on a busy
core (the writer's transaction ran while they did; the turn-latency measurements of ADR 0015).

Measured in benchmarks/bench_load.py (since folded into ``worldbook bench load``): writing
in-line added a write transaction to every turn (+8 ms p50 on SQLite, +19 ms on PostgreSQL),
and one transaction per turn in the background could not keep up with ~200 turns/s on 2 cores.

Consequences, written down in docs/decisions.md:
- counts are eventually consistent: a turn shows in the statistics once the thread wrote it,
  normally within ``write_interval``; readers in the same process call :meth:`flush` first, so a
  single-process deployment (and the tests) read their own writes;
- the backlog is bounded (``max_pending`` turns); beyond it turns are dropped from the
  statistics with a warning rather than growing memory without limit while the database is
  down. Analytics never fail or delay a turn.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from worldbook.errors import InvalidInput, WorldbookError
from worldbook.service.batch_worker import BatchWorker

logger = logging.getLogger(__name__)

Use = tuple[str, str]  # (entry id, via)
Turn = tuple[tuple[str, ...], tuple[Use, ...]]
WriteCounts = Callable[[Mapping[str, int], Mapping[str, Mapping[str, int]]], None]
"""``write(book_turns, entry_counts)`` — e.g. ``SqlStore.add_usage_counts``."""


def aggregate(turns: Sequence[Turn]) -> tuple[dict[str, int], dict[str, Counter[str]]]:
    """Sum turns: each distinct book +1 per turn; each entry +1 per turn under its first via."""
    book_turns: Counter[str] = Counter()
    entries: dict[str, Counter[str]] = {}
    for book_ids, uses in turns:
        book_turns.update(set(book_ids))
        first: dict[str, str] = {}
        for entry_id, via in uses:
            first.setdefault(entry_id, via)
        for entry_id, via in first.items():
            entries.setdefault(entry_id, Counter())[via] += 1
    return dict(book_turns), entries


class UsageRecorder(BatchWorker[Turn]):
    """Queue turns' usage and write it, summed, from one daemon thread (started on first use).

    Args:
        write: applies summed counts in one transaction.
        max_pending: turns held while the writer is behind (or the database is down); more are
            dropped and counted in :attr:`dropped`.
        write_interval: seconds the writer gathers turns before one write (:meth:`flush` and
            :meth:`close` cut it short).
    """

    def __init__(
        self, write: WriteCounts, *, max_pending: int = 100_000, write_interval: float = 0.25
    ) -> None:
        if max_pending < 1:
            raise InvalidInput(f"max_pending must be ≥ 1; got {max_pending}.", field="max_pending")
        if write_interval < 0:
            raise InvalidInput(
                f"write_interval must be ≥ 0 seconds; got {write_interval}.", field="write_interval"
            )
        super().__init__("worldbook-usage")
        self._write = write
        self._max_pending = max_pending
        self._interval = write_interval
        self._flushing = 0
        self.dropped = 0  # turns never counted (backlog full, or still queued at close)
        self.failed = 0  # turns whose write failed
        self.written = 0  # turns counted
        self.writes = 0  # transactions

    def record(self, book_ids: Sequence[str], uses: Sequence[Use]) -> None:
        """Queue one turn's usage; returns without touching the database."""
        with self._cond:
            if self._stopping:
                return
            if len(self._queue) >= self._max_pending:
                self.dropped += 1
                if self.dropped == 1 or self.dropped % 1000 == 0:
                    logger.warning("usage backlog full: %d turns not counted", self.dropped)
                return
            self._queue.append((tuple(book_ids), tuple(uses)))
            self._start_locked()
            if len(self._queue) == 1:  # the writer only waits for the first turn of a batch
                self._cond.notify_all()

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every queued turn is written; False on timeout."""
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()
            try:
                return self._cond.wait_for(self._idle, timeout)
            finally:
                self._flushing -= 1

    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + self._busy

    def close(self, timeout: float | None = 10.0) -> None:
        """Write what is queued (for at most ``timeout`` seconds; the rest is dropped and
        counted), then stop the thread, so nothing is written after the store closes."""
        self.flush(timeout)
        self._stop(timeout)

    def _dropped(self, count: int) -> None:
        self.dropped += count

    def _gather(self) -> None:
        self._cond.wait_for(lambda: self._stopping or self._flushing, self._interval)

    def _take(self) -> list[Turn]:
        batch = list(self._queue)
        self._queue.clear()
        return batch

    def _handle(self, batch: list[Turn]) -> None:
        try:
            book_turns, entry_counts = aggregate(batch)
            self._write(book_turns, entry_counts)
            self.written += len(batch)
            self.writes += 1
        except WorldbookError as exc:
            # The turns were answered; lost counts are logged, never raised.
            self.failed += len(batch)
            logger.warning("usage of %d turns not recorded: %s", len(batch), exc)
        except Exception:
            self.failed += len(batch)
            logger.exception("usage of %d turns not recorded (unexpected error)", len(batch))
