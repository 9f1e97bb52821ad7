"""Usage statistics, index status and tool lookup by id (DESIGN §5; ADR 0015).

Usage is recorded by ``select_turn`` (never by ``preview``); this module only reads it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, timedelta

from pydantic import BaseModel, ConfigDict

from worldbook.core.records import EntryQuery, EntryRecord, EntryUsageRecord, now
from worldbook.errors import InvalidInput
from worldbook.service.access import require_owner
from worldbook.service.library import visible_book
from worldbook.service.needs import IndexReads, UsageReads


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
    services: UsageReads, user_id: str, book_id: str, *, alert_turns: int | None = None
) -> BookUsage:
    """Per-entry use counts (most used first) and the never-surfaced alert; owner only,
    because the counts describe every reader's turns, not just the caller's."""
    threshold = services.settings.usage_alert_turns if alert_turns is None else alert_turns
    if threshold < 1:
        raise InvalidInput(f"alert_turns must be at least 1; got {threshold}.", field="alert_turns")
    book = require_owner(
        services.books.get_book(book_id, include_trashed=True), user_id, allow_trashed=True
    )
    services.usage.flush()  # read this process's own recent turns
    entries = services.books.list_entries(book.id, EntryQuery(sort="most_used"))
    counts = services.usage_counts.entry_usage(book.id)
    uses = [EntryUse(e, counts.get(e.id) or EntryUsageRecord(entry_id=e.id)) for e in entries]
    alert = set(services.usage_counts.usage_alerts(book.id, threshold))
    never = sorted((u for u in uses if u.entry.id in alert), key=lambda u: u.entry.position)
    return BookUsage(
        book_id=book.id,
        turns=services.usage_counts.book_turns(book.id),
        alert_turns=threshold,
        never_surfaced=never,
        entries=uses,
    )


@dataclass(frozen=True, slots=True)
class DailyTurns:
    book_id: str
    days: list[tuple[date, int]]
    """Every UTC day of the window, oldest first, with its served turns (0 when none)."""


DAYS_MAX = 366


def daily_turns(services: UsageReads, user_id: str, book_id: str, *, days: int = 30) -> DailyTurns:
    """Served turns per UTC day over the last ``days`` days (today included); owner only, like
    :func:`book_usage`. Days without turns are filled with 0 so a chart needs no gap logic."""
    if not 1 <= days <= DAYS_MAX:
        raise InvalidInput(f"days must be 1–{DAYS_MAX}; got {days}.", field="days")
    book = require_owner(
        services.books.get_book(book_id, include_trashed=True), user_id, allow_trashed=True
    )
    services.usage.flush()
    first = now().date() - timedelta(days=days - 1)
    counts = services.usage_counts.book_turns_by_day(book.id, first)
    window = [first + timedelta(days=i) for i in range(days)]
    return DailyTurns(book_id=book.id, days=[(day, counts.get(day, 0)) for day in window])


class IndexState(BaseModel):
    """How far indexing of a book has got; the API sends it as is (``IndexStatusOut``)."""

    model_config = ConfigDict(frozen=True)

    book_id: str
    model_id: str
    entries: int
    counts: dict[str, int]
    indexed_share: float
    queue_pending: int | None


def index_state(services: IndexReads, user_id: str, book_id: str) -> IndexState:
    """How far background indexing of a book has got, for anyone who can see the book."""
    book = visible_book(services, user_id, book_id)
    entries = services.books.list_entries(book.id)
    counts = Counter(e.index_status.value for e in entries)
    pending = getattr(services.queue, "pending", None)
    return IndexState(
        book_id=book.id,
        model_id=services.model_id,
        entries=len(entries),
        counts=dict(counts),
        indexed_share=services.vectors.book_index_share(book.id, services.model_id),
        queue_pending=pending() if callable(pending) else None,
    )
