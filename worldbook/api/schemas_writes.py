"""Request and response models of the living world's routes (ADR 0006)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from worldbook.api.schemas import INT32, JsonObject
from worldbook.core.living import TrashedEntry, WriteRecord
from worldbook.service.contract import Id, Request, TargetId

WriteToolName = Literal["lore_create", "lore_append"]
WriteEffectName = Literal["created", "appended", "unchanged"]
WriteStateName = Literal["live", "undone", "edited", "deleted"]
ArgumentsText = Annotated[str, StringConstraints(max_length=100_000)]


class WriteIn(Request):
    """A ``lore_create`` / ``lore_append`` tool call, forwarded by the app as the model made it."""

    book_id: Id = Field(description="The turn's living-world book (selection living_world).")
    chat_id: TargetId
    message_id: TargetId = Field(description="The reply whose tool call this is.")
    swipe: int | None = Field(
        default=None, ge=0, le=INT32, description="Which version (swipe) of the reply, if any."
    )
    call_id: TargetId = Field(
        description="The tool call's id: sending the same call again writes nothing."
    )
    tool: WriteToolName
    arguments: JsonObject | ArgumentsText = Field(
        description="The call's arguments: the JSON object, or its JSON text as OpenAI sends it."
    )


class WriteOut(BaseModel):
    """One write of the log. ``state``: live (can be undone), undone, edited (a person edited
    the entry since: kept for good) or deleted (a person deleted the entry)."""

    id: str
    book_id: str
    chat_id: str
    message_id: str
    swipe: int | None
    call_id: str
    tool: WriteToolName
    effect: WriteEffectName = Field(
        description="created a new entry, appended to one, or unchanged (already said)."
    )
    state: WriteStateName
    entry_id: str = Field(description="The entry written (created or appended to).")
    entry_title: str = Field(description="Its title when written.")
    text: str = Field(description="The created lore or the appended segment (empty if unchanged).")
    created_at: datetime
    undone_at: datetime | None
    undo_reason: Literal["undo", "regenerate", "create_undone"] | None
    edited_at: datetime | None

    @classmethod
    def of(cls, write: WriteRecord) -> WriteOut:
        # The record's fields under the same names (seq, call_key, arguments_sha stay inside).
        return cls.model_validate(write, from_attributes=True)


def tool_result(write: WriteRecord) -> str:
    """One sentence the app may hand back to the model as the tool call's result."""
    title = write.entry_title
    if write.effect == "created":
        return f"Saved a new topic, {title!r}."
    if write.effect == "appended":
        return f"Added to {title!r}."
    return f"{title!r} already says this; nothing was added."


class WriteAnswerOut(WriteOut):
    replayed: bool = Field(description="True when this call_id was already written (200).")
    result: str = Field(description="A sentence to return to the model as the tool's result.")

    @classmethod
    def answer(cls, write: WriteRecord, replayed: bool) -> WriteAnswerOut:
        values: dict[str, Any] = WriteOut.of(write).model_dump()
        return cls(**values, replayed=replayed, result=tool_result(write))


class UndoOut(BaseModel):
    undone: list[WriteOut] = Field(description="The write, then the appends its create took.")
    trashed_entry_id: str | None = Field(
        description="The entry an undone create moved to its book's trash (restorable)."
    )
    already_undone: bool


class KeptWriteOut(BaseModel):
    write: WriteOut
    reason: str


class MessageUndoOut(BaseModel):
    undone: list[WriteOut]
    kept: list[KeptWriteOut] = Field(description="Writes a person has taken over since, etc.")


class WriteList(BaseModel):
    book_id: str
    writes: list[WriteOut] = Field(description="Newest first.")
    limit: int
    offset: int


class TrashedEntryOut(BaseModel):
    id: str
    book_id: str
    title: str
    aliases: list[str]
    lore: str
    trashed_at: datetime
    write_id: str | None = Field(description="The undone create that trashed it.")

    @classmethod
    def of(cls, entry: TrashedEntry) -> TrashedEntryOut:
        return cls(
            id=entry.entry_id,
            book_id=entry.book_id,
            title=entry.draft.title,
            aliases=list(entry.draft.aliases),
            lore=entry.draft.lore,
            trashed_at=entry.trashed_at,
            write_id=entry.write_id,
        )


class TrashList(BaseModel):
    book_id: str
    entries: list[TrashedEntryOut]
