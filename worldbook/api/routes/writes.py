"""The living world (ADR 0006): the AI's tool calls, undo, regenerate, the write log and
the entry trash. Rules: :mod:`worldbook.service.writes`."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, status
from fastapi.responses import JSONResponse

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId, Limit, Offset
from worldbook.api.routes.entries import EntryId
from worldbook.api.schemas import ID_PATTERN, INT32, EntryOut
from worldbook.api.schemas_writes import (
    KeptWriteOut,
    MessageUndoOut,
    TrashedEntryOut,
    TrashList,
    UndoOut,
    WriteAnswerOut,
    WriteIn,
    WriteList,
    WriteOut,
)
from worldbook.service import writes
from worldbook.service.contract import TargetId

router = APIRouter(tags=["living world"])

WriteId = Annotated[str, Path(pattern=ID_PATTERN, description="The write's id.")]
AppId = Annotated[TargetId, Path(description="The app's id (as it spells it).")]


@router.post(
    "/writes",
    status_code=status.HTTP_201_CREATED,
    response_model=WriteAnswerOut,
    responses={200: {"model": WriteAnswerOut, "description": "A replay: nothing was written."}},
)
def record_write(body: WriteIn, caller: CallerDep, services: ServicesDep) -> JSONResponse:
    """Apply a ``lore_create`` or ``lore_append`` call of the book owner's turn: 201 naming the
    write and the entry; the same ``call_id`` of the same message again answers 200 with the
    first write and writes nothing. At most 30 live writes per book per 24 hours (an undone
    write frees its slot) and 90 attempts: 429 with Retry-After beyond."""
    request = writes.WriteRequest(**body.model_dump())  # the same fields, named alike
    outcome = writes.record_write(services, caller.user_id, request)
    answer = WriteAnswerOut.answer(outcome.write, outcome.replayed)
    code = status.HTTP_200_OK if outcome.replayed else status.HTTP_201_CREATED
    return JSONResponse(answer.model_dump(mode="json"), status_code=code)


@router.post("/writes/{write_id}/undo")
def undo_write(write_id: WriteId, caller: CallerDep, services: ServicesDep) -> UndoOut:
    """Undo one write: an append's text leaves its entry; a create's entry goes to the book's
    trash with the appends made to it since. 409, changing nothing, when a person edited the
    entry since. Undoing twice is harmless."""
    outcome = writes.undo_write(services, caller.user_id, write_id)
    return UndoOut.model_validate(outcome, from_attributes=True)


@router.delete("/chats/{chat_id}/messages/{message_id}/writes")
def undo_message_writes(
    chat_id: AppId,
    message_id: AppId,
    caller: CallerDep,
    services: ServicesDep,
    swipe: Annotated[int | None, Query(ge=0, le=INT32)] = None,
) -> MessageUndoOut:
    """Regenerating, deleting or swiping away a reply: undo what it (or one ``swipe`` of it)
    wrote to the caller's books. Writes a person has edited since are kept and listed."""
    result = writes.undo_message(services, caller.user_id, chat_id, message_id, swipe)
    return MessageUndoOut(
        undone=[WriteOut.of(w) for w in result.undone],
        kept=[KeptWriteOut(write=WriteOut.of(w), reason=why) for w, why in result.kept],
    )


@router.get("/books/{book_id}/writes")
def list_writes(
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
    limit: Limit = 50,
    offset: Offset = 0,
) -> WriteList:
    """The book's write log, newest first, with chat, message, tool and state (owner only)."""
    found = writes.list_writes(services, caller.user_id, book_id, limit=limit, offset=offset)
    return WriteList(
        book_id=book_id, writes=[WriteOut.of(w) for w in found], limit=limit, offset=offset
    )


@router.get("/books/{book_id}/entries/trash")
def list_entry_trash(book_id: BookId, caller: CallerDep, services: ServicesDep) -> TrashList:
    """Entries taken out of the book by undoing the write that created them (owner only)."""
    found = writes.list_trash(services, caller.user_id, book_id)
    return TrashList(book_id=book_id, entries=[TrashedEntryOut.of(e) for e in found])


@router.post("/entries/{entry_id}/restore")
def restore_entry(entry_id: EntryId, caller: CallerDep, services: ServicesDep) -> EntryOut:
    """Put a trashed entry back in its book (its old place if free, else last)."""
    return EntryOut.of(writes.restore_entry(services, caller.user_id, entry_id))
