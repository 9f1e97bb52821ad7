"""The usage and token-count roles of the in-memory store (``ports.UsageStore``,
``ports.TokenCountStore``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date

from worldbook.core.records import (
    USAGE_VIAS,
    EntryUsageRecord,
    now,
)
from worldbook.core.store_rules import check_usage_vias, turn_usage
from worldbook.testing.memory_entries import EntryTable


class UsageTable(EntryTable):
    """The usage and token-count roles of the in-memory store (``ports.UsageStore``,"""

    def __init__(self) -> None:
        super().__init__()
        self._token_counts: dict[tuple[str, str], int] = {}

    # --- usage and token counts ----------------------------------------------------------
    def record_turn_usage(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None:
        self.add_usage_counts(*turn_usage(book_ids, uses))

    def add_usage_counts(
        self, book_turns: Mapping[str, int], entry_counts: Mapping[str, Mapping[str, int]]
    ) -> None:
        check_usage_vias(entry_counts)
        stamp = now()
        with self._lock:
            for book_id, n in book_turns.items():
                if book_id in self._turns:
                    self._turns[book_id] += n
                    days = self._turn_days.setdefault(book_id, {})
                    days[stamp.date()] = days.get(stamp.date(), 0) + n
            for entry_id, counts in entry_counts.items():
                usage = self._entry_usage.get(entry_id)
                total = sum(int(counts.get(via, 0)) for via in USAGE_VIAS)
                if usage is None or not total:
                    continue
                bumped = {via: getattr(usage, via) + int(counts.get(via, 0)) for via in USAGE_VIAS}
                self._entry_usage[entry_id] = replace(
                    usage, total=usage.total + total, last_used_at=stamp, **bumped
                )

    def book_turns(self, book_id: str) -> int:
        with self._lock:
            return self._turns.get(book_id, 0)

    def book_turns_by_day(self, book_id: str, since: date) -> dict[date, int]:
        with self._lock:
            days = self._turn_days.get(book_id, {})
            return {day: n for day, n in days.items() if day >= since and n}

    def entry_usage(self, book_id: str) -> dict[str, EntryUsageRecord]:
        with self._lock:
            return {e.id: self._entry_usage[e.id] for e in self._book_entries(book_id)}

    def usage_alerts(self, book_id: str, min_turns: int) -> list[str]:
        if self.book_turns(book_id) < min_turns:
            return []
        with self._lock:
            return [
                e.id
                for e in self._book_entries(book_id)
                if e.enabled and not e.canon and self._entry_usage[e.id].total == 0
            ]

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        with self._lock:
            return {
                h: self._token_counts[(tokenizer_id, h)]
                for h in hashes
                if (tokenizer_id, h) in self._token_counts
            }

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        with self._lock:
            for h, n in counts.items():
                self._token_counts.setdefault((tokenizer_id, h), int(n))
