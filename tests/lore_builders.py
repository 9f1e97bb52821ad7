"""Small builders of books and turns for the selection tests (token counts are exact under
:class:`worldbook.testing.WordTokenizer`: one token per word or punctuation mark)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from worldbook.core.types import LoreBook, LoreEntry, Message, ModelProfile, SemanticHit, Turn
from worldbook.testing import WordTokenizer

TOKENIZER = WordTokenizer()


class _Identified(Protocol):
    @property
    def id(self) -> str: ...


BookT = TypeVar("BookT", bound=_Identified)


def books_once(books: Iterable[BookT]) -> list[BookT]:
    """The books as an engine uses them: a book reached twice counts once (the first)."""
    unique: dict[str, BookT] = {}
    for b in books:
        unique.setdefault(b.id, b)
    return list(unique.values())


def lore_of(title: str, tokens: int) -> str:
    """Lore of exactly ``tokens`` tokens (≥ 4); it names no entry."""
    del title
    head = "About it."  # 3 tokens
    tokens = max(tokens, 4)
    return head + " " + " ".join(["lore"] * (tokens - 3))


def entry(
    entry_id: str,
    title: str | None = None,
    tokens: int = 50,
    *,
    book_id: str = "b",
    aliases: tuple[str, ...] = (),
    canon: bool = False,
    enabled: bool = True,
    indexed: bool = True,
    lore: str | None = None,
) -> LoreEntry:
    title = title or f"Topic {entry_id}"
    text = lore if lore is not None else lore_of(title, tokens)
    return LoreEntry(
        id=entry_id,
        book_id=book_id,
        title=title,
        lore=text,
        tokens=TOKENIZER.count(text),
        aliases=aliases,
        canon=canon,
        enabled=enabled,
        indexed=indexed,
    )


def book(
    book_id: str,
    entries: list[LoreEntry],
    *,
    character: str | None = None,
    version: str = "v1",
) -> LoreBook:
    fixed = tuple(
        LoreEntry(
            e.id, book_id, e.title, e.lore, e.tokens, e.aliases, e.canon, e.enabled, e.indexed
        )
        for e in entries
    )
    return LoreBook(book_id, f"Book {book_id}", fixed, character=character, version=version)


def large_book(book_id: str = "big", n: int = 100, tokens: int = 100, **kwargs: object) -> LoreBook:
    """A book of ``n`` entries titled ``Topic <book_id>-<i>`` that never fits whole."""
    entries = [entry(f"{book_id}-{i}", tokens=tokens) for i in range(n)]
    return book(book_id, entries, **kwargs)  # type: ignore[arg-type]


def turn(
    *books: LoreBook,
    user: str = "hello",
    replies: tuple[str, ...] = (),
    messages: tuple[Message, ...] | None = None,
    window: int = 8000,
    tools: bool = False,
    hits: tuple[SemanticHit, ...] = (),
) -> Turn:
    if messages is None:
        msgs = [Message("assistant", r) for r in replies] + [Message("user", user)]
        messages = tuple(msgs)
    return Turn(books, messages, ModelProfile(window, supports_tools=tools), hits)
