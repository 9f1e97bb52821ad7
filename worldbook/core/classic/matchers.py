"""Where the keyword engine gets compiled books: a cache the caller passes, or one compile per
call (:class:`CompileEach`)."""

from __future__ import annotations

from typing import Protocol

from worldbook.core.classic.compiled import CompiledBook
from worldbook.core.classic.model import ClassicBook


class ClassicMatchers(Protocol):
    """Where the engine gets a book's :class:`CompiledBook` (the service's process-wide cache
    is ``worldbook.runtime.classic_cache.ClassicMatcherCache``)."""

    def get(self, book: ClassicBook) -> CompiledBook: ...


class CompileEach:
    """Compiles every book for the call it serves (no cache): a library caller's default."""

    def get(self, book: ClassicBook) -> CompiledBook:
        return CompiledBook(book)
