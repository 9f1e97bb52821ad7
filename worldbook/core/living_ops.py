"""The living world's write and undo, once, for every store.

Both stores run these functions inside one transaction with the book locked (SQL: the book
row ``FOR UPDATE`` / SQLite's writer lock; memory: the store's lock), through the small
:class:`LivingBook` view they implement — the way :mod:`worldbook.core.ordering` reads list
order through ``OrderView``. So replay, the rate limit, the create-becomes-append rule, the
append-only lore and the undo rules cannot drift between SQLite, PostgreSQL and the in-memory
store. Pure: no I/O here, only calls on the view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from worldbook.core import limits as lim
from worldbook.core.drafts import EntryDraft
from worldbook.core.living import (
    LivingLimits,
    LivingState,
    NamedEntry,
    UndoOutcome,
    UndoReason,
    WindowCounts,
    WriteCall,
    WriteEffect,
    WriteOutcome,
    WriteRecord,
    already_in,
    check_composed,
    check_rate,
    classic_keys,
    compose,
    fields_fingerprint,
    living_state,
    named_entry,
    sha,
    state_of,
)
from worldbook.core.living_tools import LORE_CREATE
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.errors import Conflict, EntryNotFound


class LivingBook(Protocol):
    """One book, locked for the length of a transaction, as the living world reads and
    writes it. Every method sees the writes made before it in the same transaction."""

    @property
    def book(self) -> BookRecord: ...
    def find_call(self, call_key: str) -> WriteRecord | None: ...
    def window_counts(self, since: datetime) -> WindowCounts: ...
    def names(self) -> list[NamedEntry]:
        """Every entry's names, enabled or not, in list order."""
        ...

    def entry(self, entry_id: str) -> EntryRecord | None:
        """An entry of this book (None for a missing id or another book's)."""
        ...

    def living(self, entry_id: str) -> LivingState | None: ...
    def put_living(self, state: LivingState) -> None: ...
    def live_writes(self, entry_id: str) -> list[WriteRecord]:
        """The entry's writes that are neither undone nor edited, oldest first."""
        ...

    def add_entry(self, draft: EntryDraft) -> EntryRecord:
        """Add at the end of the list (counted, queued for indexing, book version bumped)."""
        ...

    def set_lore(self, entry_id: str, lore: str) -> EntryRecord: ...
    def add_write(self, write: WriteRecord) -> WriteRecord:
        """Store a write; returns it with its ``seq`` (the log's order)."""
        ...

    def mark_edited(self, write_ids: Sequence[str], at: datetime) -> None:
        """A person edited these writes' entry (they can no longer be undone cleanly)."""
        ...

    def mark_undone(self, write_ids: Sequence[str], at: datetime, reason: UndoReason) -> None: ...
    def trash_entry(self, entry: EntryRecord, lore: str, at: datetime, write_id: str) -> None:
        """Move the entry (with ``lore`` as its text) to the book's trash, out of the list."""
        ...


def with_state(view: LivingBook, write: WriteRecord) -> WriteRecord:
    """The write with its state as of now."""
    entry = view.entry(write.entry_id)
    return replace(write, state=state_of(write, entry, view.living(write.entry_id)))


def apply_write(
    view: LivingBook,
    call: WriteCall,
    *,
    at: datetime,
    limits: LivingLimits,
    new_id: Callable[[], str],
) -> WriteOutcome:
    """Replay, rate limit, then create or append (ADR 0006)."""
    found = view.find_call(call.call_key)
    if found is not None:
        if found.arguments_sha != call.arguments_sha:
            raise Conflict(
                f"call_id {call.call_id!r} of this message was already used for another "
                "call; give each tool call its own id.",
                field="call_id",
            )
        return WriteOutcome(with_state(view, found), replayed=True)
    check_rate(view.window_counts(at - limits.window), limits, at)
    target = _target(view, call)
    if target is None:
        return WriteOutcome(_create(view, call, at, new_id))
    return WriteOutcome(_append(view, call, target, at, new_id))


def _target(view: LivingBook, call: WriteCall) -> EntryRecord | None:
    """The enabled entry this call writes to; None for a create of a new topic. A disabled
    entry answers exactly as a missing one (its existence is not revealed)."""
    if call.tool == LORE_CREATE:
        assert call.title is not None
        entry_id = named_entry(view.names(), [call.title, *call.aliases])
        return None if entry_id is None else view.entry(entry_id)
    if call.entry_id is not None:
        entry = view.entry(call.entry_id)
        if entry is None or not entry.enabled:
            raise EntryNotFound.for_id(call.entry_id, field="arguments.entry_id")
        return entry
    assert call.title is not None
    entry_id = named_entry(view.names(), [call.title])
    if entry_id is None:
        raise EntryNotFound(
            f"no entry of this book is named {call.title!r}; create it with lore_create.",
            field="arguments.title",
        )
    found = view.entry(entry_id)
    assert found is not None
    return found


_LOGGED = (
    "book_id",
    "chat_id",
    "message_id",
    "swipe",
    "call_id",
    "call_key",
    "arguments_sha",
    "tool",
)
"""What a write's log row keeps of its call, under the same names."""


def _record(
    view: LivingBook,
    call: WriteCall,
    entry: EntryRecord,
    effect: WriteEffect,
    at: datetime,
    new_id: Callable[[], str],
) -> WriteRecord:
    logged = {name: getattr(call, name) for name in _LOGGED}
    return view.add_write(
        WriteRecord(
            id=new_id(),
            seq=0,
            **logged,
            effect=effect,
            entry_id=entry.id,
            entry_title=entry.title,
            text=call.text if effect != "unchanged" else "",
            created_at=at,
        )
    )


def _create(
    view: LivingBook, call: WriteCall, at: datetime, new_id: Callable[[], str]
) -> WriteRecord:
    assert call.title is not None
    draft = EntryDraft(title=call.title, lore=call.text, aliases=list(call.aliases))
    draft = classic_keys(draft, view.book.mode)
    lim.validate_entry_draft(draft, field="arguments", mode=view.book.mode)
    lim.check_entries_per_book(view.book.entry_count, 1, field="arguments")
    entry = view.add_entry(draft)
    view.put_living(living_state(entry, entry.lore))
    return _record(view, call, entry, "created", at, new_id)


def settle(view: LivingBook, entry: EntryRecord, at: datetime) -> LivingState:
    """Bring the entry's living state up to date with what people did to it since the last
    living-world write (see :mod:`worldbook.core.living`): a changed lore becomes the base and
    ends every earlier AI write's undo; other changed fields end the create's."""
    state = view.living(entry.id)
    if state is None:  # the AI's first write to a person's entry
        state = living_state(entry, entry.lore)
        view.put_living(state)
        return state
    lore_changed = sha(entry.lore) != state.lore_sha
    if not lore_changed and fields_fingerprint(entry) == state.fields_sha:
        return state
    live = view.live_writes(entry.id)
    edited = live if lore_changed else [w for w in live if w.effect == "created"]
    view.mark_edited([w.id for w in edited], at)
    state = living_state(entry, entry.lore if lore_changed else state.base)
    view.put_living(state)
    return state


def _append(
    view: LivingBook,
    call: WriteCall,
    entry: EntryRecord,
    at: datetime,
    new_id: Callable[[], str],
) -> WriteRecord:
    state = settle(view, entry, at)
    if already_in(call.text, entry.lore):
        return _record(view, call, entry, "unchanged", at, new_id)
    lore = compose(entry.lore, [call.text])
    check_composed(lore, field="arguments.lore" if call.tool == LORE_CREATE else "arguments.text")
    updated = view.set_lore(entry.id, lore)
    view.put_living(living_state(updated, state.base))
    return _record(view, call, entry, "appended", at, new_id)


def undo(view: LivingBook, write: WriteRecord, *, at: datetime, reason: UndoReason) -> UndoOutcome:
    """Undo one write (idempotent). 409, changing nothing, when a person edited or deleted
    its entry since."""
    if write.undone_at is not None:
        return UndoOutcome(already_undone=True)
    if write.effect == "unchanged":
        view.mark_undone([write.id], at, reason)
        return UndoOutcome(undone=(_undone(write, at, reason),))
    entry = view.entry(write.entry_id)
    state = state_of(write, entry, view.living(write.entry_id))
    if state == "deleted" or entry is None:
        raise Conflict(
            f"entry {write.entry_title!r} was deleted since this write; there is nothing "
            "left to undo.",
            field="write_id",
        )
    if state == "edited":
        raise Conflict(
            f"a person edited entry {write.entry_title!r} since this write, so it is kept; "
            "edit the entry to change it.",
            field="write_id",
        )
    if write.effect == "created":
        return _undo_create(view, write, entry, at, reason)
    base = settle(view, entry, at).base
    view.mark_undone([write.id], at, reason)
    remaining = [w.text for w in view.live_writes(entry.id) if w.effect == "appended"]
    updated = view.set_lore(entry.id, compose(base, remaining))
    view.put_living(living_state(updated, base))
    return UndoOutcome(undone=(_undone(write, at, reason),), changed_entry_ids=(entry.id,))


def _undo_create(
    view: LivingBook, write: WriteRecord, entry: EntryRecord, at: datetime, reason: UndoReason
) -> UndoOutcome:
    """Trash the created entry; its later appends (from any message) are undone with it."""
    state = view.living(entry.id)
    assert state is not None  # state_of said live
    later = [w for w in view.live_writes(entry.id) if w.id != write.id]
    view.mark_undone([w.id for w in later], at, "create_undone")
    view.mark_undone([write.id], at, reason)
    view.trash_entry(entry, state.base, at, write.id)
    undone = (_undone(write, at, reason), *(_undone(w, at, "create_undone") for w in later))
    return UndoOutcome(undone=undone, trashed_entry_id=entry.id)


def _undone(write: WriteRecord, at: datetime, reason: UndoReason) -> WriteRecord:
    return replace(write, undone_at=at, undo_reason=reason, state="undone")
