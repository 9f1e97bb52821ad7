"""Usage statistics, index status and tool lookup by id (issue 6 items 3 and 5).

Usage is recorded by ``select_turn`` (never by ``preview``); this module only reads it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from worldbook.adapters.store import EntryRecord, EntryUsageRecord
from worldbook.errors import EntryNotFound, InvalidInput
from worldbook.service.access import require_owner
from worldbook.service.components import Components
from worldbook.service.library import visible_book
from worldbook.service.turns import BookSource, resolve_books


@dataclass(frozen=True, slots=True)
class EntryUse:
    entry: EntryRecord
    usage: EntryUsageRecord


@dataclass(frozen=True, slots=True)
class BookUsage:
    book_id: str
    turns: int
    alert_turns: int
    never_surfaced: list[EntryUse]
    entries: list[EntryUse]


def book_usage(
    parts: Components, user_id: str, book_id: str, *, alert_turns: int | None = None
) -> BookUsage:
    """Per-entry use counts (most used first) and the never-surfaced alert; owner only,
    because the counts describe every reader's turns, not just the caller's."""
    threshold = parts.settings.usage_alert_turns if alert_turns is None else alert_turns
    if threshold < 1:
        raise InvalidInput(f"alert_turns must be at least 1; got {threshold}.", field="alert_turns")
    book = require_owner(
        parts.store.get_book(book_id, include_trashed=True), user_id, allow_trashed=True
    )
    parts.usage.flush()  # read this process's own recent turns
    entries = parts.store.list_entries(book.id, sort="most_used")
    counts = parts.store.entry_usage(book.id)
    uses = [EntryUse(e, counts.get(e.id) or EntryUsageRecord(entry_id=e.id)) for e in entries]
    alert = set(parts.store.usage_alerts(book.id, threshold))
    never = sorted((u for u in uses if u.entry.id in alert), key=lambda u: u.entry.position)
    return BookUsage(
        book_id=book.id,
        turns=parts.store.book_turns(book.id),
        alert_turns=threshold,
        never_surfaced=never,
        entries=uses,
    )


@dataclass(frozen=True, slots=True)
class IndexState:
    book_id: str
    model_id: str
    entries: int
    counts: dict[str, int]
    indexed_share: float
    queue_pending: int | None


def index_state(parts: Components, user_id: str, book_id: str) -> IndexState:
    """How far background indexing of a book has got, for anyone who can see the book."""
    book = visible_book(parts, user_id, book_id)
    entries = parts.store.list_entries(book.id)
    counts = Counter(e.index_status.value for e in entries)
    pending = getattr(parts.queue, "pending", None)
    return IndexState(
        book_id=book.id,
        model_id=parts.model_id,
        entries=len(entries),
        counts=dict(counts),
        indexed_share=parts.store.book_index_share(book.id, parts.model_id),
        queue_pending=pending() if callable(pending) else None,
    )


def lookup_by_id(parts: Components, user_id: str, source: BookSource, entry_id: str) -> EntryRecord:
    """An entry by id for the lookup tool: only from this turn's books, never a disabled one."""
    records, _ = resolve_books(parts, user_id, source)
    allowed = {book.id for book, _ in records}
    try:
        entry = parts.store.get_entry(entry_id)
    except EntryNotFound:
        entry = None
    if entry is None or entry.book_id not in allowed or not entry.enabled:
        raise EntryNotFound(
            f"No enabled entry {entry_id!r} in this turn's books.", field="entry_id"
        )
    return entry
