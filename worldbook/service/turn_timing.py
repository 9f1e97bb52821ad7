"""Where a turn's time goes, for the metrics (ADR 0018): six stages and the turn's path.

Stages: ``resolve_books`` (access checks, book views, chat state), ``literal_match`` (matcher
lookups, builds and scans), ``query_embedding`` and ``vector_search`` (the meaning search the
core calls), ``selection`` (the rest of the core's decision) and ``rendering``. The clock of the
running turn sits in a context variable, so the meaning search and the matchers report to it
without the pure core knowing; a turn is timed in the one thread that runs it.

A turn's path is the most expensive way it found lore: ``semantic`` (the meaning search ran),
``literal`` (large books scanned by name only), ``whole_book`` (every world book travelled
whole) or ``classic`` (only the keyword engine's books).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from worldbook.core.matching import AnyMatcher, Matchers
from worldbook.core.types import LoreBook
from worldbook.runtime.metrics import metrics

T = TypeVar("T")
STAGES = (
    "resolve_books",
    "literal_match",
    "query_embedding",
    "vector_search",
    "selection",
    "rendering",
)


class StageClock:
    """Seconds per stage of one turn (nested stages are subtracted from the stage around them:
    literal matching and the vector search from ``selection``, the query embedding from
    ``vector_search``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = dict.fromkeys(STAGES, 0.0)
        self.searched = False

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started

    def report(self, path: str, total: float) -> None:
        found = metrics()
        # The query embedding runs inside the vector search (both views fused, ADR 0016), so
        # it is taken out of the search's time as the search's is out of the selection's.
        inner = self.seconds["literal_match"] + self.seconds["vector_search"]
        self.seconds["selection"] = max(0.0, self.seconds["selection"] - inner)
        searched = self.seconds["vector_search"] - self.seconds["query_embedding"]
        self.seconds["vector_search"] = max(0.0, searched)
        for name, seconds in self.seconds.items():
            found.turn_stage.labels(name).observe(seconds)
        found.turn.labels(path).observe(total)


_clock: ContextVar[StageClock | None] = ContextVar("worldbook_turn_clock", default=None)


@contextmanager
def timed_turn() -> Iterator[StageClock]:
    """The clock of the turn run inside this block."""
    clock = StageClock()
    token = _clock.set(clock)
    try:
        yield clock
    finally:
        _clock.reset(token)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Time a stage of the running turn (nothing outside a timed turn)."""
    clock = _clock.get()
    if clock is None:
        yield
        return
    if name in ("query_embedding", "vector_search"):
        clock.searched = True
    with clock.stage(name):
        yield


class _TimedMatcher:
    """A matcher whose scans count as ``literal_match``; everything else is the matcher's."""

    def __init__(self, inner: AnyMatcher) -> None:
        self._inner = inner

    def find(self, *args: Any, **kwargs: Any) -> Any:
        with stage("literal_match"):
            return self._inner.find(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class TimedMatchers:
    """The process's matcher cache, with its lookups, builds and scans timed."""

    def __init__(self, inner: Matchers) -> None:
        self._inner = inner

    def get(self, book: LoreBook) -> AnyMatcher:
        with stage("literal_match"):
            found = self._inner.get(book)
        # The core only scans and reads positions; the proxy passes both through.
        return cast(AnyMatcher, _TimedMatcher(found))

    def derived(self, book: LoreBook, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        return self._inner.derived(book, key, compute)


def turn_path(classic_only: bool, searched: bool, all_whole: bool) -> str:
    if classic_only:
        return "classic"
    if searched:
        return "semantic"
    return "whole_book" if all_whole else "literal"
