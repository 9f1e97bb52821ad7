"""The living world's use cases (ADR 0006): write, undo, regenerate, the write log and
the entry trash, with their access checks.

- Only the book's owner's turns write, and only to a book whose ``settings.living_world`` is
  true: a book the caller may not see is 404, one they only see is 403 (as every edit).
- A write or entry of a book the caller may not see answers exactly as one that does not
  exist (``WriteNotFound.for_id`` / ``EntryNotFound.for_id``), so ids cannot be probed.
- Text the AI adds, and entries it brings back, are indexed like any edit
  (``services.enqueue``), after the transaction committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from worldbook.core.living import (
    LivingLimits,
    TrashedEntry,
    UndoOutcome,
    WriteOutcome,
    WriteRecord,
    is_living,
)
from worldbook.core.living_calls import CallContext, parse_call
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.errors import Conflict, EntryNotFound, NotFound, WorldbookError, WriteNotFound
from worldbook.runtime.metrics import metrics
from worldbook.service.access import can_view, require_owner
from worldbook.service.library import owned_book
from worldbook.service.needs import Writing
from worldbook.settings import WorldbookSettings


def living_limits(settings: WorldbookSettings) -> LivingLimits:
    return LivingLimits(
        live_per_window=settings.living_writes_per_day,
        attempts_per_window=settings.living_attempts_per_day,
    )


def writable_book(books: Sequence[BookRecord], user_id: str) -> str | None:
    """The book a turn's living-world tool calls go to: the first of the turn's books (DESIGN
    §2 rule 2 order) that has the living world on and that the acting user owns."""
    for book in books:
        if book.owner_id == user_id and not book.trashed and is_living(book.settings):
            return book.id
    return None


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """A tool call as the app forwards it (``POST /v1/writes``)."""

    book_id: str
    chat_id: str
    message_id: str
    call_id: str
    tool: str
    arguments: object
    swipe: int | None = None


def record_write(services: Writing, user_id: str, request: WriteRequest) -> WriteOutcome:
    """Apply one tool call of the owner's turn (or answer its replay), counted in the
    metrics as written, replayed or refused (with the refusal's error code)."""
    counted = metrics().living_writes
    try:
        outcome = _record_write(services, user_id, request)
    except WorldbookError as exc:
        counted.labels("refused", exc.code).inc()
        raise
    counted.labels("replayed" if outcome.replayed else "written", "").inc()
    return outcome


def _record_write(services: Writing, user_id: str, request: WriteRequest) -> WriteOutcome:
    book = owned_book(services, user_id, request.book_id)
    if not is_living(book.settings):
        raise Conflict(
            f"book {book.id!r} does not take living-world writes; set its "
            "settings.living_world to true to let the AI add lore.",
            field="book_id",
        )
    ctx = CallContext(
        book.id,
        request.chat_id,
        request.message_id,
        request.call_id,
        swipe=request.swipe,
        mode=book.mode,
    )
    call = parse_call(ctx, request.tool, request.arguments)
    outcome = services.writes.record_write(call, limits=living_limits(services.settings))
    if not outcome.replayed and outcome.write.effect != "unchanged":
        services.enqueue([outcome.write.entry_id])
    return outcome


def _require_owner(services: Writing, user_id: str, book_id: str, unseen: NotFound) -> None:
    """Only the owner of ``book_id`` goes on; where the caller may not see the book, the write
    or entry of it answers ``unseen``, as one that does not exist."""
    book = services.books.get_book(book_id, include_trashed=True)
    if not can_view(book, user_id):
        raise unseen
    require_owner(book, user_id)


def _owned_write(services: Writing, user_id: str, write_id: str) -> WriteRecord:
    write = services.writes.get_write(write_id)
    _require_owner(services, user_id, write.book_id, WriteNotFound.for_id(write_id))
    return write


def undo_write(services: Writing, user_id: str, write_id: str) -> UndoOutcome:
    """Undo one write (owner only; idempotent; 409 after a person's edit)."""
    _owned_write(services, user_id, write_id)
    outcome = services.writes.undo_write(write_id)
    services.enqueue(list(outcome.changed_entry_ids))
    return outcome


@dataclass(frozen=True, slots=True)
class MessageUndo:
    """What regenerating a message undid, and the writes it had to keep (with why)."""

    undone: list[WriteRecord] = field(default_factory=list)
    kept: list[tuple[WriteRecord, str]] = field(default_factory=list)


def undo_message(
    services: Writing, user_id: str, chat_id: str, message_id: str, swipe: int | None = None
) -> MessageUndo:
    """Undo every live write one message (or one swipe of it) made to the caller's books,
    newest first (idempotent). A write a person has edited since, or one in a book in the
    trash, is kept and listed with the reason; the others are undone regardless."""
    result = MessageUndo()
    done: set[str] = set()
    for write in services.writes.message_writes(user_id, chat_id, message_id, swipe):
        if write.id in done or write.state == "undone":
            continue
        book = services.books.get_book(write.book_id, include_trashed=True)
        if book.trashed:
            reason = f"book {book.id!r} is in the trash; restore it to undo this write."
            result.kept.append((write, reason))
            continue
        try:
            outcome = services.writes.undo_write(write.id, reason="regenerate")
        except Conflict as exc:
            result.kept.append((services.writes.get_write(write.id), exc.message))
            continue
        for undone in outcome.undone:
            if undone.id not in done:
                done.add(undone.id)
                result.undone.append(undone)
        services.enqueue(list(outcome.changed_entry_ids))
    return result


def list_writes(
    services: Writing, user_id: str, book_id: str, *, limit: int = 50, offset: int = 0
) -> list[WriteRecord]:
    """A book's write log, newest first (owner only: it names the owner's chats)."""
    owned_book(services, user_id, book_id, trashed=True)
    return services.writes.list_writes(book_id, limit=limit, offset=offset)


def list_trash(services: Writing, user_id: str, book_id: str) -> list[TrashedEntry]:
    owned_book(services, user_id, book_id, trashed=True)
    return services.writes.list_entry_trash(book_id)


def restore_entry(services: Writing, user_id: str, entry_id: str) -> EntryRecord:
    """Bring an entry back from its book's trash (owner only) and index it."""
    trashed = services.writes.get_trashed_entry(entry_id)
    _require_owner(services, user_id, trashed.book_id, EntryNotFound.for_id(entry_id))
    entry = services.writes.restore_entry(entry_id)
    if entry.enabled:
        services.enqueue([entry.id])
    return entry
