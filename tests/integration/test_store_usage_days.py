"""Served turns per UTC day (the usage chart's series), on SQLite, PostgreSQL and in memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from worldbook.adapters.store import SqlStore
from worldbook.core.drafts import BookDraft, EntryDraft

LORE = "Lore long enough to pass the twenty character minimum."


def _book(store: SqlStore, title: str) -> str:
    book = store.create_book("owner", BookDraft(title=title))
    store.add_entries(book.id, [EntryDraft(title="Topic", lore=LORE)])
    return book.id


def _pin_clock(monkeypatch: pytest.MonkeyPatch, store: SqlStore, when: datetime) -> None:
    """Make the store's writes happen at ``when`` (the SQL store and the fake read ``now``)."""
    import worldbook.adapters.store.usage as sql_usage
    import worldbook.testing.memory_usage as memory_usage

    module = sql_usage if isinstance(store, SqlStore) else memory_usage
    monkeypatch.setattr(module, "now", lambda: when)


def test_turns_are_counted_per_book_per_day(store: SqlStore) -> None:
    first, second = _book(store, "First"), _book(store, "Second")
    today = datetime.now(UTC).date()
    store.record_turn_usage([first], [])
    store.record_turn_usage([first, second, first], [])  # a book reached twice counts once
    store.add_usage_counts({first: 3, second: 0}, {})
    assert store.book_turns_by_day(first, today) == {today: 5}
    assert store.book_turns_by_day(second, today) == {today: 1}
    assert store.book_turns_by_day(first, today + timedelta(days=1)) == {}
    assert store.book_turns(first) == 5  # the running total agrees with the days


def test_days_are_separate_and_since_is_inclusive(
    store: SqlStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = _book(store, "Chart")
    today = datetime.now(UTC)
    for back, turns in ((3, 2), (1, 1), (0, 4)):
        _pin_clock(monkeypatch, store, today - timedelta(days=back))
        for _ in range(turns):
            store.record_turn_usage([book], [])
    day = today.date()
    got = store.book_turns_by_day(book, day - timedelta(days=3))
    assert got == {day - timedelta(days=3): 2, day - timedelta(days=1): 1, day: 4}
    assert store.book_turns_by_day(book, day - timedelta(days=1)) == {
        day - timedelta(days=1): 1,
        day: 4,
    }


def test_purged_or_unknown_books_get_no_days(store: SqlStore) -> None:
    kept, purged = _book(store, "Kept"), _book(store, "Purged")
    today = datetime.now(UTC).date()
    store.record_turn_usage([kept, purged], [])
    store.purge_book(purged)
    assert store.book_turns_by_day(purged, today) == {}
    # A turn written after the purge (the usage writer lags) neither fails nor resurrects it.
    store.add_usage_counts({purged: 1, "never-existed": 2, kept: 1}, {})
    assert store.book_turns_by_day(purged, today) == {}
    assert store.book_turns_by_day("never-existed", today) == {}
    assert store.book_turns_by_day(kept, today) == {today: 2}
