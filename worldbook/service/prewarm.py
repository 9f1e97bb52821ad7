"""Prewarming query vectors off the request path, through a bounded queue that sheds load.

``POST /v1/prewarm`` lets an app send a finished reply so the next turn finds its vector cached.
Handing each request to FastAPI's background tasks let 40 prewarm calls of 20,000-character
texts freeze every turn and ``/health`` for minutes and grow the process to 6 GB (DESIGN §6): the
work had no bound. Here one thread embeds what waits, at most ``max_texts`` texts wait, and a
request that would overflow is refused (429) — the texts are only a cache warm-up, so shedding
them loses nothing but a few milliseconds on a later turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from worldbook.errors import RateLimited, WorldbookError
from worldbook.service.batch_worker import BatchWorker

logger = logging.getLogger(__name__)


class PrewarmQueue(BatchWorker[str]):
    """One worker thread embedding prewarm texts; at most ``max_texts`` wait.

    Args:
        embed: what to do with a batch (``QueryEmbeddings.prewarm``).
        max_texts: most texts waiting; beyond it :meth:`submit` raises :class:`RateLimited`.
        batch: most texts handed to ``embed`` at once.
    """

    def __init__(
        self, embed: Callable[[Sequence[str]], None], *, max_texts: int = 64, batch: int = 8
    ) -> None:
        super().__init__("worldbook-prewarm")
        self._embed = embed
        self._max = max_texts
        self._batch = batch

    def submit(self, texts: Sequence[str]) -> None:
        """Queue ``texts`` (all or none)."""
        with self._cond:
            if self._stopping:
                return
            if len(self._queue) + len(texts) > self._max:
                raise RateLimited(
                    f"prewarm queue is full ({self._max} texts waiting); this is only a cache "
                    "warm-up, so skip it or retry in a second.",
                    retry_after_s=1,
                )
            self._queue.extend(texts)
            self._start_locked()
            self._cond.notify()

    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until nothing waits or is being embedded; False if ``timeout`` ran out."""
        with self._cond:
            return self._cond.wait_for(self._idle, timeout=timeout)

    def close(self, timeout: float | None = 5.0) -> None:
        """Drop what waits and stop the thread (after the batch in flight)."""
        self._stop(timeout)

    def _take(self) -> list[str]:
        return [self._queue.popleft() for _ in range(min(self._batch, len(self._queue)))]

    def _handle(self, batch: list[str]) -> None:
        try:
            self._embed(batch)
        except WorldbookError as exc:  # a warm-up that failed costs the next turn only
            logger.warning("prewarm of %d texts failed: %s", len(batch), exc)
