"""Bounded memory, measured (ADR 0018): RSS of a server touching many distinct books.

``--books`` books of ``--entries`` entries each (default 1,000 × 200: 200,000 entries, every
one indexed with the fake hashing embedder, dim 256) are written to one SQLite file. Then each
variant runs in a fresh process, serving the real app in-process (``create_app`` on
``Components``, as ``worldbook serve`` wires it) and sending one ``/v1/select`` per book, every
book in turn, ``--passes`` times; RSS is read from /proc every ``--every`` books.

Variants: the default cache bound (``WORLDBOOK_INDEX_CACHE_BOOKS`` = 1000, which bounds the
vector indexes, the literal matchers and the book views alike) and a small bound (``--small``)
as the comparison in the same run. With a bound at or above the book count RSS grows while the
caches fill (first pass) and stays flat after (second pass); with a small bound it flattens
once the small caches are full. Prints a table and writes ``benchmarks/results/memory.json``.

    .venv/bin/python benchmarks/bench_memory.py [--books 1000] [--entries 200] [--small 100]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "memory.json"
MB = 1024 * 1024


def fill(url: str, books: int, entries: int) -> float:
    """Write and index the books; returns seconds taken."""
    from worldbook.adapters.store import open_store
    from worldbook.core.drafts import BookDraft, EntryDraft
    from worldbook.service.components import Components
    from worldbook.service.indexing import index_now
    from worldbook.settings import WorldbookSettings
    from worldbook.testing import HashingEmbedder

    started = time.perf_counter()
    store = open_store(url)
    parts = Components(
        WorldbookSettings(database_url=url, embedder="fake"),
        store=store,
        embedder=HashingEmbedder(),
        start_queue=False,
    )
    try:
        for b in range(books):
            book = store.create_book("bench", BookDraft(title=f"World {b}"))
            drafts = [
                EntryDraft(
                    title=f"Place {b}-{i}",
                    lore=f"Quarter {i} of world {b} trades salt, rope and lamp oil at dawn; "
                    f"its guild {i % 17} keeps the harbour ledgers.",
                )
                for i in range(entries)
            ]
            store.add_entries(book.id, drafts)
        index_now(parts.services, None)
    finally:
        parts.close()
    return time.perf_counter() - started


def serve(url: str, bound: int, passes: int, every: int, limit: int = 0) -> dict[str, Any]:
    """One variant, in this process: RSS samples while touching every book ``passes`` times."""
    from fastapi.testclient import TestClient

    from worldbook.adapters.store import open_store
    from worldbook.api.app import create_app
    from worldbook.core.records import BookQuery
    from worldbook.runtime.metrics import metrics, rss_bytes
    from worldbook.service.components import Components
    from worldbook.settings import WorldbookSettings
    from worldbook.testing import HashingEmbedder

    settings = WorldbookSettings(database_url=url, embedder="fake", index_cache_books=bound)
    store = open_store(url)
    _, key = store.create_api_key(f"bench-{bound}")
    parts = Components(settings, store=store, embedder=HashingEmbedder(), start_queue=False)
    ids: list[str] = []
    while page := store.list_books(BookQuery(owner_id="bench", limit=500, offset=len(ids))):
        ids += [b.id for b in page]
    ids = sorted(ids)[:limit] if limit else sorted(ids)  # the same books in the same order
    headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": "bench"}
    samples: list[dict[str, Any]] = [{"pass": 0, "books": 0, "rss_mb": rss_bytes() / MB}]
    with TestClient(create_app(components=parts)) as client:
        for p in range(1, passes + 1):
            for n, book_id in enumerate(ids, 1):
                turn = {
                    "book_ids": [book_id],
                    "messages": [{"role": "user", "content": f"Who keeps the ledgers? {n}"}],
                }
                answer = client.post("/v1/select", json=turn, headers=headers)
                assert answer.status_code == 200, answer.text
                if n % every == 0 or n == len(ids):
                    # the background index builds finish before RSS is read (FaissIndex)
                    parts.services.vector_index.wait_idle(60)  # type: ignore[attr-defined]
                    samples.append({"pass": p, "books": n, "rss_mb": rss_bytes() / MB})
    found = metrics()
    evictions = {
        cache: found.cache_evictions.labels(cache)._value.get()
        for cache in ("vector_index", "matcher")
    }
    parts.close()
    return {"bound": bound, "samples": samples, "evictions": evictions}


def _variant(db: Path, bound: int, args: argparse.Namespace) -> dict[str, Any]:
    """A variant in a fresh process (RSS never shrinks back, so variants must not share one)."""
    command = [sys.executable, __file__, "--serve", str(db), "--bound", str(bound)]
    command += ["--passes", str(args.passes), "--every", str(args.every)]
    command += ["--limit", str(args.limit)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"variant bound={bound} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summary(result: dict[str, Any]) -> dict[str, float]:
    samples = result["samples"]
    first = [s["rss_mb"] for s in samples if s["pass"] == 1]
    last = [s["rss_mb"] for s in samples if s["pass"] == max(s["pass"] for s in samples)]
    half = first[len(first) // 2 :]
    return {
        "start_mb": samples[0]["rss_mb"],
        "end_of_fill_mb": first[-1],
        "second_half_of_fill_growth_mb": half[-1] - half[0],
        "last_pass_start_mb": last[0],
        "last_pass_end_mb": last[-1],
        "last_pass_growth_mb": last[-1] - last[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--books", type=int, default=1000)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--small", type=int, default=100, help="The comparison's cache bound.")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--bound", type=int, default=1000, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, default=0, help="Touch only this many books.")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.serve is not None:
        found = serve(f"sqlite:///{args.serve}", args.bound, args.passes, args.every, args.limit)
        print(json.dumps(found))
        return
    run(args)


def run(args: argparse.Namespace) -> None:
    from worldbook.bench.common import machine, versions, write_results
    from worldbook.settings import WorldbookSettings

    default_bound = WorldbookSettings.model_fields["index_cache_books"].default
    with tempfile.TemporaryDirectory(prefix="wb-memory-") as tmp:
        db = Path(tmp) / "memory.db"
        fill_s = fill(f"sqlite:///{db}", args.books, args.entries)
        print(f"filled {args.books} books × {args.entries} entries in {fill_s:.0f} s")
        results = [_variant(db, bound, args) for bound in (default_bound, args.small)]
    print(
        f"{'bound':>6} {'start':>7} {'filled':>7} {'2nd half':>9} {'last pass':>17} {'growth':>7}"
    )
    for result in results:
        s = summary(result)
        print(
            f"{result['bound']:>6} {s['start_mb']:>6.0f}M {s['end_of_fill_mb']:>6.0f}M "
            f"{s['second_half_of_fill_growth_mb']:>+8.0f}M "
            f"{s['last_pass_start_mb']:>7.0f}M→{s['last_pass_end_mb']:>6.0f}M "
            f"{s['last_pass_growth_mb']:>+6.0f}M"
        )
    big, small = (summary(r) for r in results)
    report = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(),
        "books": args.books,
        "entries_per_book": args.entries,
        "passes": args.passes,
        "fill_s": round(fill_s, 1),
        "variants": [{**r, "summary": summary(r)} for r in results],
        "ratio_filled_rss_default_to_small": round(
            big["end_of_fill_mb"] / small["end_of_fill_mb"], 2
        ),
    }
    write_results(args.out, report)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
