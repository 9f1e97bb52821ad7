"""A book's glosses as its owner and readers reach them (ADR 0023): list, ask, delete.

The glosses are generated views, so what they expose is marked as such (``generated``, the
model that wrote them) and they are never part of the book's entries or its exports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from worldbook.core.glosses import (
    GLOSS_LANGUAGES,
    READER_LANGUAGES_SETTING,
    Gloss,
    gloss_model_id,
    reader_languages,
)
from worldbook.errors import InvalidInput
from worldbook.ports import GlossQueue, Store
from worldbook.service.library import owned_book, visible_book
from worldbook.service.llm_replies import not_configured
from worldbook.service.needs import HasBooks


class GlossServices(HasBooks, Protocol):
    """What the gloss use cases need: the books, the store's glosses, the gloss queue."""

    @property
    def store(self) -> Store: ...

    @property
    def gloss_queue(self) -> GlossQueue | None: ...

    @property
    def model_id(self) -> str: ...

    def invalidate_books(self, book_ids: set[str]) -> None: ...


@dataclass(frozen=True, slots=True)
class BookGlosses:
    """A book's current glosses, its reader languages and the title of each glossed entry."""

    book_id: str
    reader_languages: tuple[str, ...]
    glosses: list[Gloss]
    titles: dict[str, str]  # entry id -> the entry's title (readers see which entry it glosses)


def list_glosses(services: GlossServices, user_id: str, book_id: str) -> BookGlosses:
    """The glosses of a book the caller can see (written from its entries' current text)."""
    book = visible_book(services, user_id, book_id)
    readers = reader_languages(book.settings)
    glosses = services.store.book_glosses(book.id)
    ids = list(dict.fromkeys(g.entry_id for g in glosses))
    titles = {e.id: e.title for e in services.store.get_entries(book.id, ids)} if ids else {}
    return BookGlosses(book.id, readers, glosses, titles)


def queue_glosses(services: GlossServices, user_id: str, book_id: str) -> tuple[str, ...]:
    """Ask for the book's missing glosses to be written; its reader languages.

    Raises:
        InvalidInput: the book names no reader languages.
        LLMNotConfigured: no language model (or glosses are turned off).
    """
    book = owned_book(services, user_id, book_id)
    readers = reader_languages(book.settings)
    if not readers:
        raise InvalidInput(
            f"book {book_id} has no reader languages: set settings.{READER_LANGUAGES_SETTING} "
            '(for example ["ko", "pt"]) with PATCH /v1/books/{id} first.',
            field=f"settings.{READER_LANGUAGES_SETTING}",
        )
    if services.gloss_queue is None:
        raise not_configured("writing glosses (WORLDBOOK_GLOSSES must be true too)")
    services.gloss_queue.submit([book.id])
    return readers


def delete_glosses(
    services: GlossServices, user_id: str, book_id: str, languages: Sequence[str] | None
) -> int:
    """Delete the book's glosses (of ``languages`` only, when given) and their vectors, so
    the gloss views stop finding them at once; how many glosses went."""
    book = owned_book(services, user_id, book_id)
    store = services.store
    gone = store.delete_glosses(book.id, list(languages) if languages else None)
    for language in languages or sorted(GLOSS_LANGUAGES):
        store.delete_vectors(model_id=gloss_model_id(services.model_id, language), book_id=book.id)
    services.invalidate_books({book.id})
    return gone
