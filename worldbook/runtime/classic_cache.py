"""A bounded cache of compiled classic books, keyed by book id, cache key and settings."""

from __future__ import annotations

import threading
from collections import OrderedDict

from worldbook.core.classic.compiled import CompiledBook
from worldbook.core.classic.model import ClassicBook, ClassicSettings

# Implements worldbook.core.classic.ClassicMatchers for the keyword engine.

_Key = tuple[str, str, ClassicSettings, int]


class ClassicMatcherCache:
    """LRU of :class:`CompiledBook`. A book with an empty ``cache_key`` is compiled on every
    call (nothing says when it changed). Versions of one book live side by side (the same book
    with different names substituted in different chats); the least recently used goes first.
    A book with a ``family`` is compiled from the latest compiled version of its family (only
    its changed entries: ADR 0008, no turn pays for an edit).
    The service keeps one per process and passes it to every turn."""

    def __init__(self, max_books: int = 64) -> None:
        self._max = max(1, max_books)
        self._items: OrderedDict[_Key, CompiledBook] = OrderedDict()
        # (book id, family) -> the latest version compiled: the next version starts from it.
        self._latest: OrderedDict[tuple[str, str], CompiledBook] = OrderedDict()
        self._lock = threading.Lock()
        self.builds = 0  # how many books were compiled (tests assert caching with it)
        self.incremental_builds = 0  # of which from an earlier version (only what changed)

    def __len__(self) -> int:
        return len(self._items)

    def get(self, book: ClassicBook) -> CompiledBook:
        if not book.cache_key:
            self.builds += 1
            return CompiledBook(book)
        key = (book.id, book.cache_key, book.settings, len(book.entries))
        family = (book.id, book.family)
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
            previous = self._latest.get(family) if book.family else None
        # Outside the lock: other books' turns need not wait.
        compiled = CompiledBook(book, previous)
        with self._lock:
            self.builds += 1
            self.incremental_builds += previous is not None
            self._items[key] = compiled
            while len(self._items) > self._max:
                self._items.popitem(last=False)
            if book.family:
                self._latest[family] = compiled
                self._latest.move_to_end(family)
                while len(self._latest) > self._max:
                    self._latest.popitem(last=False)
        return compiled
