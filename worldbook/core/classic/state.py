"""What a chat remembers between classic turns, per book and entry (DESIGN §3).

Timed effects follow SillyTavern's ``WorldInfoTimedEffects`` (classic.md §2.6): an effect runs
from ``start`` (the chat length when it was set) to ``end``; it is dropped when the chat did not
advance past ``start`` (a regenerated or deleted message) unless ``protected`` (a cooldown that
began when a sticky ended), and when the entry changed (``revision``). ``matched`` records that
the entry reached the model in this chat (``@@keep_activate_after_match`` /
``@@dont_activate_after_match``). The store keeps one JSON object per chat and book
(:func:`book_state_to_json` / :func:`book_state_from_json`); a preview discards the new state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BookState = Mapping[str, "EntryChatState"]  # entry id -> state (only entries with some state)


@dataclass(frozen=True, slots=True)
class TimedEffect:
    """A sticky or cooldown window: active while ``start`` < chat length < ``end``."""

    start: int
    end: int
    protected: bool = False
    revision: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"start": self.start, "end": self.end}
        if self.protected:
            out["protected"] = True
        if self.revision:
            out["revision"] = self.revision
        return out

    @staticmethod
    def from_json(data: object) -> TimedEffect | None:
        if not isinstance(data, dict):
            return None
        start, end = data.get("start"), data.get("end")
        if not isinstance(start, int) or not isinstance(end, int):
            return None
        if isinstance(start, bool) or isinstance(end, bool):
            return None
        revision = data.get("revision", "")
        return TimedEffect(
            start=start,
            end=end,
            protected=data.get("protected") is True,
            revision=revision if isinstance(revision, str) else "",
        )


@dataclass(frozen=True, slots=True)
class EntryChatState:
    sticky: TimedEffect | None = None
    cooldown: TimedEffect | None = None
    matched: bool = False

    @property
    def empty(self) -> bool:
        return self.sticky is None and self.cooldown is None and not self.matched

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.sticky is not None:
            out["sticky"] = self.sticky.to_json()
        if self.cooldown is not None:
            out["cooldown"] = self.cooldown.to_json()
        if self.matched:
            out["matched"] = True
        return out

    @staticmethod
    def from_json(data: object) -> EntryChatState:
        if not isinstance(data, dict):
            return EntryChatState()
        return EntryChatState(
            sticky=TimedEffect.from_json(data.get("sticky")),
            cooldown=TimedEffect.from_json(data.get("cooldown")),
            matched=data.get("matched") is True,
        )


NO_STATE = EntryChatState()


@dataclass(frozen=True, slots=True)
class ChatState:
    """The classic state of one chat: book id -> entry id -> :class:`EntryChatState`."""

    books: Mapping[str, BookState] = field(default_factory=dict)

    def entry(self, book_id: str, entry_id: str) -> EntryChatState:
        book = self.books.get(book_id)
        if book is None:
            return NO_STATE
        return book.get(entry_id, NO_STATE)

    def book(self, book_id: str) -> BookState:
        return self.books.get(book_id, {})

    def replace_books(self, updates: Mapping[str, BookState]) -> ChatState:
        """A new state with these books' states replaced (empty states dropped)."""
        books = dict(self.books)
        for book_id, entries in updates.items():
            kept = {k: v for k, v in entries.items() if not v.empty}
            if kept:
                books[book_id] = kept
            else:
                books.pop(book_id, None)
        return ChatState(books)

    def to_json(self) -> dict[str, Any]:
        return {book_id: book_state_to_json(entries) for book_id, entries in self.books.items()}

    @staticmethod
    def from_json(data: object) -> ChatState:
        if not isinstance(data, dict):
            return ChatState()
        books = {str(k): book_state_from_json(v) for k, v in data.items()}
        return ChatState({k: v for k, v in books.items() if v})


def book_state_to_json(entries: BookState) -> dict[str, Any]:
    """One book's state as the store keeps it (keyed by chat and book)."""
    return {entry_id: s.to_json() for entry_id, s in sorted(entries.items()) if not s.empty}


def book_state_from_json(data: object) -> dict[str, EntryChatState]:
    """The inverse of :func:`book_state_to_json`; malformed parts are dropped, never raised."""
    if not isinstance(data, dict):
        return {}
    out = {str(k): EntryChatState.from_json(v) for k, v in data.items()}
    return {k: v for k, v in out.items() if not v.empty}
