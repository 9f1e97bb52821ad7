"""The process-wide cache of literal matchers and the text derived from each book version
(DESIGN §4: caches keyed by versions, bounded), with background rebuilds of edited books.

Implements :class:`worldbook.core.matching.Matchers` for the pure selection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

from worldbook.core.matching import AnyMatcher, BookMatcher, OverlayMatcher, changed_names
from worldbook.core.types import LoreBook
from worldbook.runtime.background import AFTER_THE_TURN_S, Foreground, LatestPerKey, no_pause
from worldbook.runtime.lru import LRU
from worldbook.runtime.metrics import metrics

T = TypeVar("T")


class MatcherCache:
    """A bounded LRU of matchers keyed by ``(book_id, version)``, plus a bounded memo of other
    text derived from one book version (entry cuts and index lines).

    The service keeps one for the process and passes it to every ``select`` call. A book with
    an empty ``version`` is never cached (nothing says when it changed), so it is rebuilt on
    every call — the service must set ``LoreBook.version``.

    With ``background=True`` a new version of a book already cached is first answered by an
    :class:`OverlayMatcher` (when at most ``overlay_max`` entries changed) while one daemon
    thread builds the full automaton; without it (the default; tests) builds are synchronous.
    A ``foreground`` gauge makes that thread step aside while the process serves turns.
    """

    def __init__(
        self,
        max_books: int = 256,
        max_derived: int = 20_000,
        *,
        background: bool = False,
        overlay_max: int = 500,
        foreground: Foreground | None = None,
    ) -> None:
        self._items: LRU[tuple[str, str], AnyMatcher] = LRU(max(1, max_books), name="matcher")
        self._derived: LRU[tuple[str, ...], object] = LRU(max(1, max_derived))
        # The last full matcher built per book: the base of the next version's overlay.
        self._latest: LRU[str, BookMatcher] = LRU(max(1, max_books))
        self._lock = threading.Lock()
        self._builder: LatestPerKey[str, LoreBook] | None = (
            LatestPerKey(
                self._build_and_finish, name="worldbook-matcher-build", delay_s=AFTER_THE_TURN_S
            )
            if background
            else None
        )
        self._overlay_max = overlay_max
        # Background builds step aside while the process serves a turn.
        self._pause = foreground.pause if foreground is not None else no_pause
        self.builds = 0  # how many full automata were built (tests assert caching with it)
        self.overlays = 0

    def derived(self, book: LoreBook, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``(book.id, book.version, *key)``.

        ``key`` must name everything else the value depends on (entry id, tokenizer id, caps).
        """
        if not book.version:
            return compute()
        return cast(T, self._derived.get_or_compute((book.id, book.version, *key), compute))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, book: LoreBook) -> AnyMatcher:
        """The matcher of ``book`` at its current version (an overlay while the full one is
        being built in the background)."""
        if not book.version:
            return self._build(book)
        key = book.matcher_key
        matcher = self._items.get(key)
        if matcher is not None:
            return matcher
        base = self._latest.get(key[0])
        if self._builder is not None and base is not None:
            changed = changed_names(base.names, book)
            if len(changed) <= self._overlay_max:
                overlay = OverlayMatcher(base, book, changed)
                with self._lock:
                    self.overlays += 1
                self._items.put(key, overlay)
                self._builder.submit(book.id, book)
                return overlay
        # Built outside any lock: a 100k-alias automaton takes a while and other books'
        # turns should not wait. Two threads may build the same one; the last one wins.
        return self._finish(book, self._build(book))

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no background build is pending (tests, benchmarks)."""
        return self._builder.wait_idle(timeout) if self._builder is not None else True

    def _build(self, book: LoreBook, pause: Callable[[], None] = no_pause) -> BookMatcher:
        matcher = BookMatcher(book, pause=pause)
        with self._lock:
            self.builds += 1
            metrics().cache_builds.labels("matcher").inc()
        return matcher

    def _build_and_finish(self, book: LoreBook) -> None:
        self._finish(book, self._build(book, self._pause))

    def _finish(self, book: LoreBook, matcher: BookMatcher) -> BookMatcher:
        key = book.matcher_key
        self._items.put(key, matcher)
        self._latest.put(key[0], matcher)
        # An older version of the same book will never be asked for again.
        self._items.discard_where(lambda k: k[0] == key[0] and k != key)
        return matcher
