"""A book's glosses (ADR 0023): names and gists the app's model wrote in the readers' languages.

Generated, and marked so: never entries, never exported, never rendered as lore; only searched.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status
from pydantic import BaseModel

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.schemas import ID_PATTERN
from worldbook.core.glosses import READER_LANGUAGES_MAX
from worldbook.service import gloss_books

router = APIRouter(tags=["glosses"])

BookId = Annotated[str, Path(pattern=ID_PATTERN, description="The book's id.")]
Languages = Annotated[
    list[str] | None,
    Query(max_length=READER_LANGUAGES_MAX * 2, description="Only these languages (codes)."),
]


class GlossOut(BaseModel):
    entry_id: str
    entry_title: str
    language: str
    name: str
    gist: str
    model: str
    generated: bool = True  # always: a gloss is the model's words, not the author's


class GlossList(BaseModel):
    book_id: str
    reader_languages: list[str]
    glosses: list[GlossOut]


class GlossesQueued(BaseModel):
    book_id: str
    reader_languages: list[str]
    queued: bool = True


class GlossesDeleted(BaseModel):
    book_id: str
    deleted: int


@router.get("/books/{book_id}/glosses")
def list_glosses(book_id: BookId, caller: CallerDep, services: ServicesDep) -> GlossList:
    """The book's current glosses (a gloss of an entry edited since is not listed)."""
    found = gloss_books.list_glosses(services, caller.user_id, book_id)
    return GlossList(
        book_id=found.book_id,
        reader_languages=list(found.reader_languages),
        glosses=[
            GlossOut(
                entry_id=g.entry_id,
                entry_title=found.titles.get(g.entry_id, ""),
                language=g.language,
                name=g.name,
                gist=g.gist,
                model=g.model,
            )
            for g in found.glosses
        ],
    )


@router.post("/books/{book_id}/glosses", status_code=status.HTTP_202_ACCEPTED)
def write_glosses(book_id: BookId, caller: CallerDep, services: ServicesDep) -> GlossesQueued:
    """Ask the worker to write the glosses the book lacks; owner only. 422 without
    ``settings.reader_languages``, 503 without a language model."""
    readers = gloss_books.queue_glosses(services, caller.user_id, book_id)
    return GlossesQueued(book_id=book_id, reader_languages=list(readers))


@router.delete("/books/{book_id}/glosses")
def delete_glosses(
    book_id: BookId, caller: CallerDep, services: ServicesDep, language: Languages = None
) -> GlossesDeleted:
    """Delete the book's glosses (``?language=ko`` for some only); owner only."""
    gone = gloss_books.delete_glosses(services, caller.user_id, book_id, language)
    return GlossesDeleted(book_id=book_id, deleted=gone)
