"""Usage counters, the token-count cache and resumable import jobs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase, record_of
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.records import (
    USAGE_VIAS,
    EntryUsageRecord,
    ImportJobRecord,
    ImportStatus,
    now,
)
from worldbook.core.store_rules import check_usage_vias, check_user_id, new_id, turn_usage
from worldbook.errors import InvalidInput, NotFound


def _job_record(row: Mapping[Any, Any]) -> ImportJobRecord:
    return record_of(ImportJobRecord, row)


def advance_job(conn: sa.Connection, job_id: str, book_id: str, done: int) -> None:
    """Add ``done`` entries to a running job's progress (inside the caller's transaction)."""
    result = conn.execute(
        sa.update(t.import_jobs)
        .where(
            t.import_jobs.c.id == job_id,
            t.import_jobs.c.book_id == book_id,
            t.import_jobs.c.status == "running",
        )
        .values(done_entries=t.import_jobs.c.done_entries + done, updated_at=now())
    )
    if not result.rowcount:
        raise NotFound(f"no running import job {job_id!r} for this book.", field="import_job_id")


class UsageMixin(StoreBase):
    # --- usage -----------------------------------------------------------------------------

    def record_turn_usage(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None:
        """Count one served turn for each book and one use per entry (first ``via`` wins).

        ``via`` is canon | whole_book | full | index, or a selection via (``USAGE_OF_VIA``).
        """
        self.add_usage_counts(*turn_usage(book_ids, uses))

    def add_usage_counts(
        self, book_turns: Mapping[str, int], entry_counts: Mapping[str, Mapping[str, int]]
    ) -> None:
        """Add ``book_turns`` to each book's served turns and ``entry_counts`` (entry id →
        {via: uses}) to each entry's per-via and total counters, in one transaction.

        The background usage recorder sums every turn queued since its last write and calls
        this once, so the write cost follows the number of distinct books and entries used,
        not the traffic. Rows are updated in sorted id order, two executemany statements, so
        concurrent writers (several API processes) cannot deadlock; ids deleted meanwhile are
        skipped.
        """
        check_usage_vias(entry_counts)
        stamp = now()
        books = [{"b_id": b, "b_n": n} for b, n in sorted(book_turns.items()) if n]
        entries: list[dict[str, Any]] = []
        for entry_id, counts in sorted(entry_counts.items()):
            per_via = {f"n_{via}": int(counts.get(via, 0)) for via in USAGE_VIAS}
            total = sum(per_via.values())
            if total:
                entries.append({**per_via, "e_id": entry_id, "n_total": total, "stamp": stamp})
        u = t.entry_usage.c
        with write_tx(self._engine) as conn:
            if books:
                conn.execute(
                    sa.update(t.book_usage)
                    .where(t.book_usage.c.book_id == sa.bindparam("b_id"))
                    .values(turns=t.book_usage.c.turns + sa.bindparam("b_n")),
                    books,
                )
                conn.execute(self._add_day_turns(stamp.date()), books)
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

    def _add_day_turns(self, day: date) -> sa.Insert:
        """Upsert ``b_n`` turns on ``day`` for book ``b_id``, only while its ``book_usage`` row
        exists (a purged book gets no day row; see ``tables.BookUsageDayRow``)."""
        d = t.book_usage_days
        turns = sa.bindparam("b_n", type_=sa.Integer)
        source = sa.select(t.book_usage.c.book_id, sa.literal(day, sa.Date()), turns).where(
            t.book_usage.c.book_id == sa.bindparam("b_id")
        )
        insert = pg_insert(d) if self._pg else sqlite_insert(d)
        upsert = insert.from_select(["book_id", "day", "turns"], source)
        return upsert.on_conflict_do_update(
            index_elements=[d.c.book_id, d.c.day], set_={"turns": d.c.turns + upsert.excluded.turns}
        )

    def book_turns_by_day(self, book_id: str, since: date) -> dict[date, int]:
        """Served turns of the book per UTC day, for days on or after ``since`` that had any."""
        d = t.book_usage_days
        stmt = sa.select(d.c.day, d.c.turns).where(d.c.book_id == book_id, d.c.day >= since)
        with read_tx(self._engine) as conn:
            return {row[0]: int(row[1]) for row in conn.execute(stmt)}

    def book_turns(self, book_id: str) -> int:
        with read_tx(self._engine) as conn:
            turns = conn.execute(
                sa.select(t.book_usage.c.turns).where(t.book_usage.c.book_id == book_id)
            ).scalar()
        return int(turns or 0)

    def entry_usage(self, book_id: str) -> dict[str, EntryUsageRecord]:
        """Usage counters of every entry of the book."""
        stmt = (
            sa.select(t.entry_usage)
            .join(t.entries, t.entries.c.id == t.entry_usage.c.entry_id)
            .where(t.entries.c.book_id == book_id)
        )
        with read_tx(self._engine) as conn:
            rows = conn.execute(stmt).mappings().all()
        return {r["entry_id"]: record_of(EntryUsageRecord, r) for r in rows}

    def usage_alerts(self, book_id: str, min_turns: int) -> list[str]:
        """Enabled when-relevant entries never surfaced, once the book served ``min_turns``."""
        if self.book_turns(book_id) < min_turns:
            return []
        stmt = (
            sa.select(t.entries.c.id)
            .join(t.entry_usage, t.entry_usage.c.entry_id == t.entries.c.id)
            .where(
                t.entries.c.book_id == book_id,
                t.entries.c.enabled.is_(True),
                t.entries.c.canon.is_(False),
                t.entry_usage.c.total == 0,
            )
            .order_by(t.entries.c.position, t.entries.c.id)
        )
        with read_tx(self._engine) as conn:
            return list(conn.execute(stmt).scalars())

    # --- token-count cache -----------------------------------------------------------------

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, int] = {}
        with read_tx(self._engine) as conn:
            for start in range(0, len(wanted), 500):
                rows = conn.execute(
                    sa.select(t.token_counts.c.content_hash, t.token_counts.c.tokens).where(
                        t.token_counts.c.tokenizer_id == tokenizer_id,
                        t.token_counts.c.content_hash.in_(wanted[start : start + 500]),
                    )
                )
                found.update({row[0]: row[1] for row in rows})
        return found

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        """Cache counts (upsert; a count for the same text and tokenizer never changes)."""
        rows = [
            {"content_hash": h, "tokenizer_id": tokenizer_id, "tokens": int(n)}
            for h, n in counts.items()
        ]
        if not rows:
            return
        insert = pg_insert if self._pg else sqlite_insert
        with write_tx(self._engine) as conn:
            conn.execute(insert(t.token_counts).on_conflict_do_nothing(), rows)

    # --- import jobs -----------------------------------------------------------------------

    def create_import_job(
        self, book_id: str, owner_id: str, source_sha256: str, total_entries: int
    ) -> ImportJobRecord:
        check_user_id(owner_id, field="owner_id")
        if total_entries < 0:
            raise InvalidInput("total_entries must be ≥ 0.", field="total_entries")
        stamp = now()
        row = {
            "id": new_id(),
            "book_id": book_id,
            "owner_id": owner_id,
            "source_sha256": source_sha256,
            "total_entries": total_entries,
            "done_entries": 0,
            "status": "running",
            "created_at": stamp,
            "updated_at": stamp,
        }
        with write_tx(self._engine) as conn:
            self._lock_book(conn, book_id)
            conn.execute(sa.insert(t.import_jobs).values(**row))
        return _job_record(row)

    def get_import_job(self, job_id: str) -> ImportJobRecord:
        with read_tx(self._engine) as conn:
            row = (
                conn.execute(sa.select(t.import_jobs).where(t.import_jobs.c.id == job_id))
                .mappings()
                .first()
            )
        if row is None:
            raise NotFound(f"import job {job_id!r} does not exist.", field="job_id")
        return _job_record(row)

    def find_import_job(self, owner_id: str, source_sha256: str) -> ImportJobRecord | None:
        """The newest running job for this owner and source file (to resume it)."""
        with read_tx(self._engine) as conn:
            row = (
                conn.execute(
                    sa.select(t.import_jobs)
                    .where(
                        t.import_jobs.c.owner_id == owner_id,
                        t.import_jobs.c.source_sha256 == source_sha256,
                        t.import_jobs.c.status == "running",
                    )
                    .order_by(t.import_jobs.c.created_at.desc())
                )
                .mappings()
                .first()
            )
        return None if row is None else _job_record(row)

    def finish_import_job(self, job_id: str, status: ImportStatus = "done") -> ImportJobRecord:
        if status not in ("done", "failed"):
            raise InvalidInput('status must be "done" or "failed".', field="status")
        with write_tx(self._engine) as conn:
            conn.execute(
                sa.update(t.import_jobs)
                .where(t.import_jobs.c.id == job_id)
                .values(status=status, updated_at=now())
            )
        return self.get_import_job(job_id)
