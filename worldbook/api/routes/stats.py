"""Per-book usage statistics (with the never-surfaced alert) and indexing status."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId
from worldbook.api.schemas import (
    EntryUsageOut,
    IndexStatusOut,
    UsageDailyOut,
    UsageDayOut,
    UsageEntryOut,
    UsageOut,
)
from worldbook.service import book_usage

router = APIRouter(tags=["usage"])


def _use(use: book_usage.EntryUse) -> UsageEntryOut:
    entry = use.entry
    counts = EntryUsageOut.model_validate(use.usage, from_attributes=True)
    return UsageEntryOut(
        entry_id=entry.id,
        title=entry.title,
        canon_entry=entry.canon,
        enabled=entry.enabled,
        **counts.model_dump(),
    )


@router.get("/books/{book_id}/usage")
def usage(
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
    alert_turns: Annotated[
        int | None, Query(ge=1, le=1_000_000, description="Default: the service setting.")
    ] = None,
) -> UsageOut:
    """How often each entry reached the model (most used first); owner only."""
    stats = book_usage.book_usage(services, caller.user_id, book_id, alert_turns=alert_turns)
    return UsageOut(
        book_id=stats.book_id,
        turns=stats.turns,
        alert_turns=stats.alert_turns,
        never_surfaced=[_use(u) for u in stats.never_surfaced],
        entries=[_use(u) for u in stats.entries],
    )


@router.get("/books/{book_id}/usage/daily")
def usage_daily(
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
    days: Annotated[
        int, Query(ge=1, le=book_usage.DAYS_MAX, description="Window length, today included.")
    ] = 30,
) -> UsageDailyOut:
    """Served turns per UTC day (zeros included), for a usage chart; owner only."""
    daily = book_usage.daily_turns(services, caller.user_id, book_id, days=days)
    return UsageDailyOut(
        book_id=daily.book_id, days=[UsageDayOut(day=d, turns=n) for d, n in daily.days]
    )


@router.get("/books/{book_id}/index", tags=["indexing"])
def index_status(book_id: BookId, caller: CallerDep, services: ServicesDep) -> IndexStatusOut:
    """How far background indexing of the book has got."""
    state = book_usage.index_state(services, caller.user_id, book_id)
    return IndexStatusOut.model_validate(state, from_attributes=True)
