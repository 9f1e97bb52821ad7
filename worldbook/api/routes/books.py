"""Books: create, read, update, trash, restore, list mine; the public library and copying."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.schemas import ID_PATTERN, BookCreate, BookList, BookOut, BookPatch
from worldbook.core.drafts import BookDraft
from worldbook.core.types import Visibility
from worldbook.service import library

router = APIRouter(tags=["books"])

BookId = Annotated[str, Path(pattern=ID_PATTERN, description="The book's id.")]
Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]
Search = Annotated[str | None, Query(max_length=200, description="Title contains this text.")]
Tag = Annotated[str | None, Query(max_length=50, description="Has this tag.")]


@router.post("/books", status_code=status.HTTP_201_CREATED)
def create_book(body: BookCreate, caller: CallerDep, services: ServicesDep) -> BookOut:
    """A new, empty book owned by the caller (private unless told otherwise)."""
    draft = BookDraft(**body.model_dump())
    return BookOut.of(library.create_book(services, caller.user_id, draft))


@router.get("/books")
def list_my_books(
    caller: CallerDep,
    services: ServicesDep,
    trashed: bool = False,
    visibility: Visibility | None = None,
    q: Search = None,
    tag: Tag = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> BookList:
    """The caller's books, most recently changed first; ``trashed=true`` lists the trash."""
    books = library.list_my_books(
        services,
        caller.user_id,
        trashed=trashed,
        visibility=visibility,
        query=q,
        tag=tag,
        limit=limit,
        offset=offset,
    )
    return BookList(books=[BookOut.of(b) for b in books], limit=limit, offset=offset)


@router.get("/books/{book_id}")
def get_book(book_id: BookId, caller: CallerDep, services: ServicesDep) -> BookOut:
    """A book the caller can see (its owner also sees it in the trash)."""
    return BookOut.of(library.visible_book(services, caller.user_id, book_id))


@router.patch("/books/{book_id}")
def update_book(
    book_id: BookId, body: BookPatch, caller: CallerDep, services: ServicesDep
) -> BookOut:
    """Change the fields sent; owner only. Public visibility needs at least 10 entries."""
    changes = body.changes()
    return BookOut.of(library.update_book(services, caller.user_id, book_id, changes))


@router.delete("/books/{book_id}")
def trash_book(book_id: BookId, caller: CallerDep, services: ServicesDep) -> BookOut:
    """Move a book to the trash (restorable); owner only."""
    return BookOut.of(library.trash_book(services, caller.user_id, book_id))


@router.post("/books/{book_id}/restore")
def restore_book(book_id: BookId, caller: CallerDep, services: ServicesDep) -> BookOut:
    """Bring a book back from the trash; owner only."""
    return BookOut.of(library.restore_book(services, caller.user_id, book_id))


@router.post("/books/{book_id}/copy", status_code=status.HTTP_201_CREATED)
def copy_book(book_id: BookId, caller: CallerDep, services: ServicesDep) -> BookOut:
    """Copy a book the caller can see into their library, as an editable private book."""
    return BookOut.of(library.copy_to_library(services, caller.user_id, book_id))


@router.get("/library", tags=["library"])
def browse_library(
    caller: CallerDep,
    services: ServicesDep,
    q: Search = None,
    tag: Tag = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> BookList:
    """Public books, searched by title and/or tag."""
    books = library.browse_library(services, query=q, tag=tag, limit=limit, offset=offset)
    return BookList(books=[BookOut.of(b) for b in books], limit=limit, offset=offset)
