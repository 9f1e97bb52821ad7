"""List-order cost in a 2,000-entry book: sparse positions vs renumbering the whole book.

For each database (SQLite file always; PostgreSQL when WORLDBOOK_TEST_POSTGRES_URL or
--postgres names one) and each workload, milliseconds per move for
  - sparse: ``SqlStore.move_entries`` (writes only the moved rows, renumbers on gap exhaustion)
  - naive:  the baseline that rewrites every position of the book on every move,
both in one transaction under the book-row lock, plus the rows each wrote per move.
Workloads: 1 random entry to a random spot; 50 random entries; 500 random entries; and the
worst case for gaps, one entry inserted again and again right after the same anchor.

Prints a table; writes benchmarks/results/ordering.json with machine, versions and date.
Run: OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_ordering.py [--postgres URL]
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from worldbook.adapters.store import SqlStore, open_store
from worldbook.adapters.store.engine import write_tx
from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.ordering import Target, renumber

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "ordering.json"
ENTRIES = 2000
LORE = "Lore long enough to pass the twenty character minimum."


def naive_move(store: SqlStore, book_id: str, ids: list[str], to: Target) -> int:
    """Baseline: compute the new order and write every entry's position (renumber-all)."""
    engine = store._engine
    with write_tx(engine) as conn:
        store._lock_book(conn, book_id)
        current = [eid for eid, _ in store._order(conn, book_id)]
        moving = set(ids)
        moved = [e for e in current if e in moving]
        rest = [e for e in current if e not in moving]
        if to == "first":
            cut = 0
        elif to == "last":
            cut = len(rest)
        else:
            cut = rest.index(to[1]) + (1 if to[0] == "after" else 0)
        positions = renumber(rest[:cut] + moved + rest[cut:])
        store._write_positions(conn, positions)
        store._touch_book(conn, book_id)
        return len(positions)


def workload(name: str, ids: list[str], rng: random.Random) -> list[tuple[list[str], Target]]:
    ops: list[tuple[list[str], Target]] = []
    if name == "wedge":
        anchor = ids[0]
        return [([ids[i]], ("after", anchor)) for i in range(1, 41)]
    size = {"move 1": 1, "move 50": 50, "move 500": 500}[name]
    for _ in range(40 if size < 500 else 10):
        moving = rng.sample(ids, size)
        others = [i for i in ids if i not in set(moving)]
        kind = rng.choice(["first", "last", "before", "after"])
        to: Target = kind if kind in ("first", "last") else (kind, rng.choice(others))  # type: ignore[assignment]
        ops.append((moving, to))
    return ops


def measure(
    book_id: str, ops: list[tuple[list[str], Target]], run: Callable[..., int]
) -> tuple[float, float]:
    """(ms per op, rows written per op)."""
    rows = 0
    start = time.perf_counter()
    for moving, to in ops:
        rows += run(book_id, moving, to=to)
    return 1000 * (time.perf_counter() - start) / len(ops), rows / len(ops)


def bench(label: str, url: str) -> list[dict[str, object]]:
    store = open_store(url)
    rows: list[dict[str, object]] = []
    for name in ("move 1", "move 50", "move 500", "wedge"):
        results: dict[str, tuple[float, float]] = {}
        for method in ("sparse", "naive"):
            book = store.create_book("bench", BookDraft(title=f"{name} {method}"))
            ids: list[str] = []
            for start in range(0, ENTRIES, 500):
                batch = [
                    EntryDraft(title=f"Entry {i}", lore=LORE) for i in range(start, start + 500)
                ]
                ids += [e.id for e in store.add_entries(book.id, batch)]
            ops = workload(name, ids, random.Random(42))
            if method == "sparse":
                run: Callable[..., int] = store.move_entries
            else:

                def run(book_id: str, moving: list[str], *, to: Target) -> int:
                    return naive_move(store, book_id, moving, to)

            results[method] = measure(book.id, ops, run)
        rows.append(
            {
                "database": label,
                "workload": name,
                "sparse_ms": round(results["sparse"][0], 2),
                "naive_ms": round(results["naive"][0], 2),
                "speedup": round(results["naive"][0] / results["sparse"][0], 2),
                "sparse_rows_written": round(results["sparse"][1], 1),
                "naive_rows_written": round(results["naive"][1], 1),
            }
        )
    store.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get("WORLDBOOK_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        rows += bench("sqlite", f"sqlite:///{tmp}/bench.db")
    if args.postgres:
        admin = sa.create_engine(args.postgres, isolation_level="AUTOCOMMIT")
        name = f"wb_bench_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        try:
            url = sa.make_url(args.postgres).set(database=name).render_as_string(False)
            rows += bench("postgresql", url)
        finally:
            with admin.connect() as conn:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            admin.dispose()

    header = f"{'database':<11}{'workload':<10}{'sparse ms':>10}{'naive ms':>10}{'speedup':>9}"
    header += f"{'rows/op sparse':>16}{'rows/op naive':>15}"
    print(f"Moves in a {ENTRIES:,}-entry book (ms per move, one transaction each)")
    print(header)
    for r in rows:
        print(
            f"{r['database']:<11}{r['workload']:<10}{r['sparse_ms']:>10}{r['naive_ms']:>10}"
            f"{r['speedup']:>9}{r['sparse_rows_written']:>16}{r['naive_rows_written']:>15}"
        )
    found = versions(("SQLAlchemy", "sqlmodel", "psycopg"))
    found["python"] = sys.version.split()[0]
    found["sqlite"] = sqlite3.sqlite_version
    write_results(
        RESULTS,
        {
            "benchmark": "ordering",
            "date": now_iso(),
            "machine": machine(),
            "versions": found,
            "entries": ENTRIES,
            "rows": rows,
        },
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
