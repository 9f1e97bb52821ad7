"""Indexing throughput end to end through the queue versus the raw embedder, same texts, same run.

    .venv/bin/python benchmarks/bench_indexing.py [--embedder use-m3] [--entries 240]
        [--batch-size 32] [--redis redis://127.0.0.1:6379/14] [--no-celery]

Entries are the English XQuAD paragraphs (../shared/samples/xquad/xquad.en.json), titled by their
article. Measured, entries per second:
- raw: ``embed_passages`` on exactly the texts the pipeline embeds, ``batch_size`` per call, with
  1 BLAS thread and with one per core; the faster is the baseline (on a shared, loaded machine
  more threads can be much slower). Measured before and after the pipelines, mean reported;
- in-process: request_indexing → InProcessIndexQueue → index_entries → SQLite, until the book's
  indexed share is 1.0 (the baseline's thread count);
- celery-1 / celery-2: the same through Redis and a real ``celery worker`` with 1 pool process
  (the baseline's thread count) or 2 (cores split between them), after a warm-up book has loaded
  the model in each.
The target is >= 90% of raw. Writes benchmarks/results/indexing.json (one run per embedder).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workers.runtime import Indexer  # noqa: E402
from worldbook.adapters.embedders import load_embedder  # noqa: E402
from worldbook.adapters.queues import INDEX_QUEUE, CeleryIndexQueue, InProcessIndexQueue  # noqa: E402
from worldbook.adapters.store import SqlStore, open_store  # noqa: E402
from worldbook.bench.common import machine, now_iso, versions, write_results  # noqa: E402
from worldbook.bench.indexing import pipeline_texts, raw_rate, xquad_drafts  # noqa: E402
from worldbook.core.drafts import BookDraft, EntryDraft  # noqa: E402
from worldbook.ports import Embedder  # noqa: E402
from worldbook.service.indexing import request_indexing  # noqa: E402

SAMPLES = ROOT.parent / "shared" / "samples" / "xquad" / "xquad.en.json"
RESULTS = ROOT / "benchmarks" / "results" / "indexing.json"


def load_entries(n: int) -> list[EntryDraft]:
    if not SAMPLES.is_file():
        sys.exit(f"samples not found at {SAMPLES}")
    drafts = xquad_drafts(SAMPLES.parent, n)
    if len(drafts) < n:
        sys.exit(f"only {len(drafts)} paragraphs in {SAMPLES}")
    return drafts


def new_book(store: SqlStore, drafts: list[EntryDraft], title: str) -> tuple[str, list[str]]:
    book = store.create_book("bench", BookDraft(title=title))
    ids: list[str] = []
    for i in range(0, len(drafts), 500):
        ids += [e.id for e in store.add_entries(book.id, drafts[i : i + 500])]
    return book.id, ids


def wait_indexed(
    store: SqlStore, book_id: str, model_id: str, proc: subprocess.Popen[bytes] | None
) -> None:
    deadline = time.monotonic() + 1800
    while store.book_index_share(book_id, model_id) < 1.0:
        if proc is not None and proc.poll() is not None:
            sys.exit("the celery worker exited; see its log")
        if time.monotonic() > deadline:
            sys.exit("indexing did not finish within 30 minutes")
        time.sleep(0.1)


def in_process_rate(
    embedder: Embedder, drafts: list[EntryDraft], batch: int, workdir: Path
) -> float:
    store = open_store(f"sqlite:///{workdir / 'inproc.db'}")
    book_id, ids = new_book(store, drafts, "in-process")
    indexer = Indexer(store=store, embedder=embedder, batch_size=batch)
    queue = InProcessIndexQueue(indexer.run, batch_size=batch)
    queue.start()
    try:
        start = time.perf_counter()
        request_indexing(store, queue, ids, embedder.model_id)
        queue.wait_idle()
        wait_indexed(store, book_id, embedder.model_id, None)
        elapsed = time.perf_counter() - start
    finally:
        queue.stop()
        store.close()
    return len(ids) / elapsed


def celery_rate(
    spec: str,
    model_id: str,
    drafts: list[EntryDraft],
    batch: int,
    processes: int,
    threads: int,
    redis_url: str,
    workdir: Path,
) -> float:
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    db_url = f"sqlite:///{workdir / f'celery{processes}.db'}"
    store = open_store(db_url)
    warm_id, warm_ids = new_book(store, drafts[: 2 * batch * processes], f"warm-up {processes}")
    book_id, ids = new_book(store, drafts, f"celery {processes}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORLDBOOK_")}
    env.update(
        WORLDBOOK_DATABASE_URL=db_url,
        WORLDBOOK_BROKER_URL=redis_url,
        WORLDBOOK_EMBEDDER=spec,
        WORLDBOOK_INDEX_BATCH_SIZE=str(batch),
        WORLDBOOK_EMBED_THREADS=str(threads),
        WORLDBOOK_DATA_DIR=str(workdir / "data"),
        PYTHONPATH=str(ROOT),
    )
    log = (workdir / f"worker{processes}.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker",
         f"--concurrency={processes}", f"--queues={INDEX_QUEUE}", "--without-gossip",
         "--without-mingle", "--loglevel=WARNING"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    queue = CeleryIndexQueue(redis_url)
    try:
        # Warm-up: one message per pool process loads the model in each before timing.
        for i in range(0, len(warm_ids), batch):
            queue.enqueue(warm_ids[i : i + batch])
        wait_indexed(store, warm_id, model_id, proc)
        start = time.perf_counter()
        request_indexing(store, queue, ids, model_id)
        wait_indexed(store, book_id, model_id, proc)
        elapsed = time.perf_counter() - start
    finally:
        proc.terminate()
        proc.wait(60)
        log.close()
        queue.close()
        store.close()
        client.flushdb()
    return len(ids) / elapsed


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="use-m3", help="use-m3 (default), e5-small, fake")
    parser.add_argument("--entries", type=int, default=240)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--redis",
        default=os.environ.get("WORLDBOOK_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14"),
        help="a Redis database this benchmark may flush (not the tests' database 15)",
    )
    parser.add_argument("--no-celery", action="store_true", help="skip the Celery rows")
    return parser.parse_args()


def _pipeline_rows(
    args: argparse.Namespace, embedder: Embedder, drafts: list[EntryDraft], best: int, cores: int
) -> dict[str, float]:
    """Entries per second of each indexing path: in-process, then Celery with 1 and 2 workers."""
    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="wb-bench-indexing-") as tmp:
        workdir = Path(tmp)
        rows["in-process"] = in_process_rate(embedder, drafts, args.batch_size, workdir)
        if not args.no_celery:
            for processes in (1, 2):
                threads = best if processes == 1 else max(1, cores // processes)
                rows[f"celery-{processes}"] = celery_rate(
                    args.embedder, embedder.model_id, drafts, args.batch_size, processes,
                    threads, args.redis, workdir,
                )  # fmt: skip
    return rows


def _save(result: dict[str, Any], embedder_name: str) -> None:
    """One file, one run per embedder: a later run of another embedder keeps this one."""
    runs = {}
    if RESULTS.is_file():
        runs = json.loads(RESULTS.read_text(encoding="utf-8")).get("runs", {})
    runs[embedder_name] = result
    write_results(RESULTS, {"runs": runs})
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def main() -> None:
    args = _args()
    drafts = load_entries(args.entries)
    cores = len(os.sched_getaffinity(0))
    embedders = {t: load_embedder(args.embedder, threads=t) for t in sorted({1, cores})}
    embedder = embedders[1]
    texts = pipeline_texts(drafts, embedder)
    raw_before: dict[int, float] = {}
    for threads, candidate in embedders.items():
        candidate.embed_passages(texts[: args.batch_size])  # load the model before timing
        raw_before[threads] = raw_rate(candidate, texts, len(drafts), args.batch_size)
    best = max(raw_before, key=lambda t: raw_before[t])
    embedder = embedders[best]
    rows = _pipeline_rows(args, embedder, drafts, best, cores)
    raw_after = raw_rate(embedder, texts, len(drafts), args.batch_size)
    raw = (raw_before[best] + raw_after) / 2

    table = [{"path": "raw embedder", "entries_per_s": round(raw, 1), "vs_raw": 1.0}]
    table += [
        {"path": name, "entries_per_s": round(rate, 1), "vs_raw": round(rate / raw, 3)}
        for name, rate in rows.items()
    ]
    print(f"embedder {embedder.model_id}: {len(drafts)} entries, {len(texts)} texts, "
          f"batch {args.batch_size}, {cores} cores; raw by threads {raw_before}, "
          f"baseline {best} thread(s)")  # fmt: skip
    print(f"{'path':<14} {'entries/s':>10} {'vs raw':>7}")
    for row in table:
        print(f"{row['path']:<14} {row['entries_per_s']:>10} {row['vs_raw']:>7.0%}")

    result = {
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(("worldbook", "celery", "kombu", "redis", "numpy", "SQLAlchemy")),
        "embedder": args.embedder,
        "model_id": embedder.model_id,
        "entries": len(drafts),
        "texts": len(texts),
        "batch_size": args.batch_size,
        "baseline": "raw embed_passages on the same texts with the faster thread count, "
        "mean of before and after the pipelines",
        "raw_before_per_s_by_threads": {str(t): round(r, 1) for t, r in raw_before.items()},
        "baseline_threads": best,
        "load_average_1m_at_end": round(os.getloadavg()[0], 2),
        "raw_after_per_s": round(raw_after, 1),
        "target_vs_raw": 0.9,
        "rows": table,
    }
    _save(result, args.embedder)


if __name__ == "__main__":
    main()
