"""One daemon thread that brings cached things up to date off the request path.

Used where a turn can keep answering with what it has while a newer version is built: the
full keyword automaton of an edited book (:class:`worldbook.core.matching.MatcherCache`) and
the vector index of a book whose vectors changed (:class:`worldbook.adapters.faiss_index.
FaissIndex`). Work is keyed (a book id): a newer submission replaces one not yet started, so a
burst of edits to one book costs one build, not one per edit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LatestPerKey(Generic[K, V]):
    """Runs ``work(value)`` on one daemon thread for the newest value submitted per key.

    The thread starts on the first submission. A ``work`` that raises is counted in
    ``failures`` and otherwise ignored: whoever submitted keeps serving what it had.
    """

    def __init__(self, work: Callable[[V], None], *, name: str) -> None:
        self._work = work
        self._name = name
        self._pending: dict[K, V] = {}
        self._busy = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self.failures = 0

    def submit(self, key: K, value: V) -> None:
        with self._cond:
            self._pending[key] = value  # a newer value replaces one not yet started
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running (tests, benchmarks); False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                _, value = self._pending.popitem()
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
