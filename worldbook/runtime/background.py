"""One daemon thread that brings cached things up to date off the request path.

Used where a turn can keep answering with what it has while a newer version is built: the
full keyword automaton of an edited book (:class:`worldbook.core.matching.MatcherCache`) and
the vector index of a book whose vectors changed (:class:`worldbook.adapters.faiss_index.
FaissIndex`). Work is keyed (a book id): a newer submission replaces one not yet started, so a
burst of edits to one book costs one build, not one per edit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

AFTER_THE_TURN_S = 0.1
"""The delay a rebuild triggered by a turn waits: long enough for that turn to finish first
(a turn on a 2,000-entry book takes 5–40 ms), short enough that the overlay or the previous
build serves only briefly. Measured in ``benchmarks/bench_edit.py``."""

K = TypeVar("K")
V = TypeVar("V")


class LatestPerKey(Generic[K, V]):
    """Runs ``work(value)`` on one daemon thread for the newest value submitted per key.

    The thread starts on the first submission. A ``work`` that raises is counted in
    ``failures`` and otherwise ignored: whoever submitted keeps serving what it had. With
    ``delay_s`` a key's work starts that long after its newest submission: the turn that
    submitted it finishes before the build competes with it for the GIL, and a burst of edits
    to one book costs one build.
    """

    def __init__(self, work: Callable[[V], None], *, name: str, delay_s: float = 0.0) -> None:
        self._work = work
        self._name = name
        self._delay_s = delay_s
        self._pending: dict[K, tuple[V, float]] = {}  # key -> (newest value, when it is due)
        self._busy = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self.failures = 0

    def submit(self, key: K, value: V) -> None:
        with self._cond:
            # A newer value replaces one not yet started, and the key waits ``delay_s`` from
            # its newest submission: a burst of edits costs one build.
            self._pending[key] = (value, time.monotonic() + self._delay_s)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running (tests, benchmarks); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _next(self) -> V:
        """The value of the key due first, once it is due (called holding the condition)."""
        while True:
            self._cond.wait_for(lambda: bool(self._pending))
            key = min(self._pending, key=lambda k: self._pending[k][1])
            wait = self._pending[key][1] - time.monotonic()
            if wait <= 0:
                return self._pending.pop(key)[0]
            self._cond.wait(wait)

    def _run(self) -> None:
        while True:
            with self._cond:
                value = self._next()
                self._busy = True
            try:
                self._work(value)
            except Exception:
                with self._cond:
                    self.failures += 1
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()


class Foreground:
    """How many requests (turns) this process is serving, so background rebuilds can step
    aside for them.

    A Python thread that computes while a turn runs does not only take half of the CPU: each
    time the turn releases the GIL (every database call, tokenizer call, FAISS search) it waits
    a whole switch interval to get it back, and a turn releases it hundreds of times — a turn
    beside the rebuild of a 100,000-alias automaton took ≈250 ms for 20 ms of its own work
    (``benchmarks/bench_edit.py``, "during the rebuild"). So a rebuild calls :meth:`pause` at
    short steps, and waits there while a turn is in flight, at most ``max_wait_s`` per step so
    it still ends under constant load (the overlay or the previous build serves meanwhile).
    """

    def __init__(self, *, max_wait_s: float = 0.02) -> None:
        self._active = 0
        self._cond = threading.Condition()
        self._max_wait_s = max_wait_s

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Marks one request in flight for its duration."""
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

    def pause(self) -> None:
        """Wait (up to ``max_wait_s``) while a request is in flight."""
        with self._cond:
            if self._active:
                self._cond.wait_for(lambda: not self._active, self._max_wait_s)


def no_pause() -> None:
    """A ``pause`` for work with nothing to step aside for."""
