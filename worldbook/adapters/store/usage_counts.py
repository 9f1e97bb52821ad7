"""Aggregated usage increments in one transaction (the background usage recorder's write).

``SqlStore.record_turn_usage`` writes one turn per transaction; the recorder
(``worldbook.service.usage_recorder``) instead sums every turn queued since its last write and
applies the sums here: one UPDATE per book and one per entry, as two executemany statements in
one transaction, so the write cost follows the number of distinct books and entries used, not the
traffic. Rows are updated in sorted id order, like ``record_turn_usage``, so concurrent writers
(several API processes) cannot deadlock. Additive to the store; it belongs in ``UsageMixin``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.engine import write_tx
from worldbook.adapters.store.records import USAGE_VIAS, now
from worldbook.adapters.store.store import SqlStore
from worldbook.errors import InvalidInput

EntryCounts = Mapping[str, Mapping[str, int]]
"""entry id → {via: uses}; via is canon | whole_book | full | index."""


def add_usage_counts(
    store: SqlStore, book_turns: Mapping[str, int], entry_counts: EntryCounts
) -> None:
    """Add ``book_turns`` to each book's served turns and ``entry_counts`` to each entry's
    per-via and total counters (ids that no longer exist are skipped: deleted meanwhile)."""
    for counts in entry_counts.values():
        unknown = set(counts) - set(USAGE_VIAS)
        if unknown:
            raise InvalidInput(f"unknown usage via {sorted(unknown)[0]!r}.", field="uses")
    stamp = now()
    books = [{"b_id": b, "b_n": n} for b, n in sorted(book_turns.items()) if n]
    entries: list[dict[str, Any]] = []
    for entry_id, counts in sorted(entry_counts.items()):
        per_via = {f"n_{via}": int(counts.get(via, 0)) for via in USAGE_VIAS}
        total = sum(per_via.values())
        if total:
            entries.append({**per_via, "e_id": entry_id, "n_total": total, "stamp": stamp})
    u = t.entry_usage.c
    with write_tx(store._engine) as conn:
        if books:
            conn.execute(
                sa.update(t.book_usage)
                .where(t.book_usage.c.book_id == sa.bindparam("b_id"))
                .values(turns=t.book_usage.c.turns + sa.bindparam("b_n")),
                books,
            )
        if entries:
            increments = {u[via]: u[via] + sa.bindparam(f"n_{via}") for via in USAGE_VIAS}
            conn.execute(
                sa.update(t.entry_usage)
                .where(u.entry_id == sa.bindparam("e_id"))
                .values(
                    {
                        u.total: u.total + sa.bindparam("n_total"),
                        u.last_used_at: sa.bindparam("stamp"),
                        **increments,
                    }
                ),
                entries,
            )
