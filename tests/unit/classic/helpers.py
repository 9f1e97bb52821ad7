"""Builders for the classic conformance suite: small books, chats and lookups of the result.

Token counts use :class:`worldbook.testing.WordTokenizer` (one token per word or punctuation
mark), so budgets in the tests are exact.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from worldbook.core.classic import (
    ChatState,
    ClassicBook,
    ClassicEntry,
    ClassicResult,
    ClassicSettings,
    ClassicTurn,
    TraceRecord,
    select_classic,
)
from worldbook.core.types import Message
from worldbook.runtime.classic_cache import ClassicMatcherCache
from worldbook.testing import WordTokenizer

COUNT = WordTokenizer().count


def entry(entry_id: str, *keys: str, content: str | None = None, **fields: Any) -> ClassicEntry:
    """An entry of book ``b`` whose content is ``Lore of <id>.`` unless given."""
    book_id = fields.pop("book_id", "b")
    return ClassicEntry(
        id=entry_id,
        book_id=book_id,
        title=fields.pop("title", f"Entry {entry_id}"),
        content=f"Lore of {entry_id}." if content is None else content,
        keys=keys,
        **fields,
    )


def book(*entries: ClassicEntry, book_id: str = "b", **settings: Any) -> ClassicBook:
    settings.setdefault("scan_depth", 4)
    return ClassicBook(
        book_id,
        f"Book {book_id}",
        tuple(replace(e, position=i) for i, e in enumerate(entries)),
        ClassicSettings(**settings),
        cache_key="v1",
    )


def chat(*texts: str, first: str = "user") -> list[Message]:
    """Messages alternating user / assistant, starting with ``first`` (oldest first)."""
    other = "assistant" if first == "user" else "user"
    return [Message(first if i % 2 == 0 else other, t) for i, t in enumerate(texts)]  # type: ignore[arg-type]


def run(
    books: ClassicBook | tuple[ClassicBook, ...],
    messages: list[Message],
    state: ChatState | None = None,
    **turn: Any,
) -> ClassicResult:
    """One turn, with a fresh matcher cache (tests never share compiled books)."""
    if isinstance(books, ClassicBook):
        books = (books,)
    turn.setdefault("chat_id", "chat-1")
    return select(ClassicTurn(books, messages, COUNT, **turn), state)


def select(turn: ClassicTurn, state: ChatState | None = None) -> ClassicResult:
    """The turn's selection with a fresh matcher cache (tests never share compiled books)."""
    return select_classic(turn, state, ClassicMatcherCache())


def ids(result: ClassicResult) -> list[str]:
    """Injected entry ids in render order."""
    return [a.entry_id for a in result.activations]


def fate(result: ClassicResult, entry_id: str) -> TraceRecord:
    found = [t for t in result.trace if t.entry_id == entry_id]
    assert len(found) == 1, f"{entry_id}: {len(found)} trace records"
    return found[0]
