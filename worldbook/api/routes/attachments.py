"""Attachments: a book attached to a character, a story or a novel, or globally to a user
(``global/{your user id}``: in every turn of yours)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Response, status

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId
from worldbook.api.schemas import AttachmentList, AttachmentOut, BookOut
from worldbook.service import library

router = APIRouter(tags=["attachments"])

Kind = Annotated[
    Literal["character", "story", "novel", "global"],
    Path(description="What owns the world; global: the acting user (target id = their id)."),
]
TargetId = Annotated[str, Path(min_length=1, max_length=255, description="The app's id for it.")]


@router.put("/attachments/{target_kind}/{target_id}/books/{book_id}")
def attach(
    target_kind: Kind,
    target_id: TargetId,
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
) -> AttachmentOut:
    """Attach a book the caller may use; attaching it again changes nothing."""
    record = library.attach(services, caller.user_id, book_id, target_kind, target_id)
    return AttachmentOut(
        target_kind=record.target_kind,
        target_id=record.target_id,
        book_id=record.book_id,
        position=record.position,
    )


@router.delete(
    "/attachments/{target_kind}/{target_id}/books/{book_id}",
    status_code=status.HTTP_204_NO_CONTENT,
)
def detach(
    target_kind: Kind,
    target_id: TargetId,
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
) -> Response:
    """Remove the attachment (of a book the caller can see)."""
    library.detach(services, caller.user_id, book_id, target_kind, target_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/attachments/{target_kind}/{target_id}")
def list_attachments(
    target_kind: Kind, target_id: TargetId, caller: CallerDep, services: ServicesDep
) -> AttachmentList:
    """The target's books the caller can see, in attachment order."""
    books = library.attached_books(services, caller.user_id, target_kind, target_id)
    return AttachmentList(
        target_kind=target_kind, target_id=target_id, books=[BookOut.of(b) for b in books]
    )
