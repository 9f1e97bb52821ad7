"""Load run of the HTTP service on loopback, against the library called in-process.

For each database (SQLite file, then a fresh PostgreSQL database next to the ``test`` one):
1. build a 2,000-entry book of synthetic lore and index it (fake embedder by default);
2. in-process baseline: N threads calling ``select_turn`` for a fixed time;
3. HTTP: ``uvicorn worldbook.api.app:create_app --factory`` in a subprocess, N client threads
   (one httpx client each) POSTing /v1/select for the same fixed time; the server reports the
   turn's own time in ``Server-Timing``, so the selection's share of each HTTP latency is known;
4. usage recording cost: one thread alternating 0.25 s windows of ``run_turn`` with and without
   recording (ABAB…, so drift hits both alike); after each phase the usage writer's backlog is
   drained and reported, so one phase does not slow the next.
Every turn has a new last message (nothing is served from the query-vector cache alone), and
about half name an entry, so literal matching and vector search both run.

Prints a table and writes benchmarks/results/load.json (machine, CPU count, versions, date).

Run: OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_load.py [--seconds 20] [--clients 8]
     [--embedder fake|use-m3|e5-small] [--backends sqlite,postgres]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import Message, ModelProfile
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.indexing import index_now
from worldbook.service.turns import TurnInput, run_turn, select_turn
from worldbook.service.usage_recorder import UsageRecorder
from worldbook.settings import WorldbookSettings

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "load.json"
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
_VOCABULARY = (
    "river mountain empire guild forest harbor citadel desert storm ancient oath crown relic "
    "shadow merchant council dragon temple frontier winter silver iron market prophecy ruin "
    "war treaty moon island bridge library tower legion spirit famine plague tide canyon"
)
WORDS = _VOCABULARY.split()


# --- the book and the turns -------------------------------------------------------------------


def synthetic_drafts(n: int, rng: random.Random) -> list[EntryDraft]:
    drafts = []
    for i in range(n):
        title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}"
        lore = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))).capitalize() + "."
        drafts.append(EntryDraft(title=title, lore=lore, canon=i < 5))
    return drafts


class Turns:
    """Endless distinct conversations: 5 recent messages, the last one new every time."""

    def __init__(self, titles: list[str], seed: int) -> None:
        self._titles = titles
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._n = 0

    def next(self) -> list[Message]:
        with self._lock:
            self._n += 1
            n, rng = self._n, self._rng
            words = [rng.choice(WORDS) for _ in range(60)]
            named = rng.choice(self._titles) if rng.random() < 0.5 else None
        history = [
            Message("user", "We ride north at dawn toward the frontier."),
            Message("assistant", "The road is long; the guild watches the bridge.", "Narrator"),
            Message("user", " ".join(words[:20])),
            Message("assistant", " ".join(words[20:40]), "Narrator"),
        ]
        last = f"Turn {n}: " + " ".join(words[40:]) + (f" What of {named}?" if named else "")
        return [*history, Message("user", last)]


def as_json(messages: list[Message]) -> list[dict[str, str]]:
    out = []
    for m in messages:
        item = {"role": m.role, "content": m.content}
        if m.name:
            item["name"] = m.name
        out.append(item)
    return out


# --- measuring --------------------------------------------------------------------------------


@dataclass
class Run:
    latencies_ms: list[float] = field(default_factory=list)
    turn_ms: list[float] = field(default_factory=list)  # server-side turn time (HTTP only)
    errors: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)
        out: dict[str, Any] = {
            "turns": len(lat),
            "errors": self.errors,
            "seconds": round(self.seconds, 2),
            "turns_per_s": round(len(lat) / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(percentile(lat, 50), 2),
            "p99_ms": round(percentile(lat, 99), 2),
            "mean_ms": round(statistics.fmean(lat), 2) if lat else 0.0,
        }
        if self.turn_ms:
            out["server_turn_mean_ms"] = round(statistics.fmean(self.turn_ms), 2)
            out["turn_share_of_latency"] = round(
                statistics.fmean(self.turn_ms) / statistics.fmean(lat), 3
            )
        return out


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    rank = min(len(values) - 1, max(0, round(pct / 100 * len(values)) - 1))
    return values[rank]


def run_for(seconds: float, workers: int, work: Callable[[Run], None]) -> Run:
    """Run ``work`` in ``workers`` threads until ``seconds`` pass."""
    run = Run()
    deadline = time.perf_counter() + seconds
    barrier = threading.Barrier(workers + 1)

    def loop() -> None:
        barrier.wait()
        while time.perf_counter() < deadline:
            work(run)

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    run.seconds = time.perf_counter() - start
    return run


def timed(run: Run, call: Callable[[], float | None]) -> None:
    start = time.perf_counter()
    try:
        server_ms = call()
    except Exception as exc:
        with run.lock:
            run.errors += 1
        print(f"  error: {type(exc).__name__}: {exc}"[:300], file=sys.stderr)
        return
    took = (time.perf_counter() - start) * 1000
    with run.lock:
        run.latencies_ms.append(took)
        if server_ms is not None:
            run.turn_ms.append(server_ms)


# --- databases --------------------------------------------------------------------------------


@contextmanager
def database(backend: str, workdir: Path, pg_url: str) -> Iterator[str]:
    if backend == "sqlite":
        yield f"sqlite:///{workdir / 'load.db'}"
        return
    base = sa.make_url(pg_url)
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    name = f"wb_bench_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def server_version(url: str) -> str:
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                return f"SQLite {sqlite3.sqlite_version}"
            return str(conn.execute(sa.text("SHOW server_version")).scalar())
    finally:
        engine.dispose()


# --- the server -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def server(env: dict[str, str], port: int) -> Iterator[str]:
    cmd = [
        sys.executable, "-m", "uvicorn", "worldbook.api.app:create_app", "--factory",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, env={**os.environ, **env}, cwd=ROOT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited with {proc.returncode}")
            try:
                if httpx.get(f"{base}/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.time() > deadline:
                raise RuntimeError("uvicorn did not become ready in 120 s")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


# --- one backend ------------------------------------------------------------------------------


def bench_backend(backend: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": backend}
    with database(backend, workdir, args.pg_url) as url:
        out["database"] = server_version(url)
        env = {
            "WORLDBOOK_DATABASE_URL": url,
            "WORLDBOOK_EMBEDDER": args.embedder,
            "WORLDBOOK_DATA_DIR": str(workdir),
            "WORLDBOOK_EMBED_THREADS": "1",
        }
        settings = WorldbookSettings(
            database_url=url, embedder=args.embedder, data_dir=workdir, embed_threads=1
        )
        parts = Components(settings, start_queue=False)
        try:
            rng = random.Random(7)
            print(f"[{backend}] building a {args.entries}-entry book …", flush=True)
            book = parts.services.store.create_book("bench", BookDraft(title="Load world"))
            drafts = synthetic_drafts(args.entries, rng)
            for start in range(0, len(drafts), 500):
                parts.services.store.add_entries(book.id, drafts[start : start + 500])
            started = time.perf_counter()
            report = index_now(parts.services, book_id=book.id)
            out["index_seconds"] = round(time.perf_counter() - started, 1)
            out["indexed"] = len(report.indexed)
            _, key = parts.services.store.create_api_key("bench")
            titles = [d.title for d in drafts]
            source = BookSource(book_ids=(book.id,))
            profile = ModelProfile(input_window=32_000, supports_tools=True)
            turns = Turns(titles, seed=1)
            # Warm caches (lore book, FAISS index, matcher, tokenizer) once, like a live process.
            select_turn(
                parts.services,
                user_id="bench",
                source=source,
                messages=turns.next(),
                profile=profile,
            )

            print(
                f"[{backend}] in-process, {args.clients} threads, {args.seconds:.0f} s", flush=True
            )

            def in_process(run: Run) -> None:
                msgs = turns.next()

                def one_turn() -> None:
                    select_turn(
                        parts.services,
                        user_id="bench",
                        source=source,
                        messages=msgs,
                        profile=profile,
                    )

                timed(run, one_turn)

            out["in_process"] = run_for(args.seconds, args.clients, in_process).summary()
            out["usage_writer"] = drain(parts, out["in_process"]["turns"])
            # One caller, no contention: the per-turn cost alone.
            out["in_process_1"] = run_for(args.seconds / 2, 1, in_process).summary()
            drain(parts, 0)
            out["usage_recording"] = usage_cost(parts, source, profile, turns, args.seconds)
            drain(parts, 0)
        finally:
            parts.close()

        print(f"[{backend}] HTTP, {args.clients} clients, {args.seconds:.0f} s", flush=True)
        with server(env, free_port()) as base:
            headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": "bench"}
            local = threading.local()

            def over_http(run: Run) -> None:
                client = getattr(local, "client", None)
                if client is None:
                    client = local.client = httpx.Client(base_url=base, timeout=30)
                body = {
                    "book_ids": [book.id],
                    "messages": as_json(turns.next()),
                    "input_window": 32_000,
                    "supports_tools": True,
                }

                def call() -> float:
                    response = client.post("/v1/select", json=body, headers=headers)
                    if response.status_code != 200:
                        raise RuntimeError(f"{response.status_code}: {response.text[:200]}")
                    timing = response.headers.get("server-timing", "turn;dur=0")
                    return float(timing.split("dur=")[1])

                timed(run, call)

            warm = httpx.post(
                f"{base}/v1/select",
                json={"book_ids": [book.id], "messages": as_json(turns.next())},
                headers=headers,
                timeout=60,
            )
            warm.raise_for_status()
            out["http"] = run_for(args.seconds, args.clients, over_http).summary()
            out["http_1"] = run_for(args.seconds / 2, 1, over_http).summary()
    http, local_run = out["http"], out["in_process"]
    http_1, local_1 = out["http_1"], out["in_process_1"]
    out["http_over_in_process"] = {
        "throughput_ratio": round(http["turns_per_s"] / local_run["turns_per_s"], 3),
        "p50_ratio": round(http["p50_ms"] / local_run["p50_ms"], 3),
        "p50_ratio_1_client": round(http_1["p50_ms"] / local_1["p50_ms"], 3),
        "p50_added_ms_1_client": round(http_1["p50_ms"] - local_1["p50_ms"], 2),
    }
    return out


def drain(parts: Components, turns: int) -> dict[str, Any]:
    """Wait for the usage writer's backlog, so one phase does not slow the next, and say how
    far behind it was: the writer's sustained rate is turns written / (phase + drain) time."""
    usage = parts.services.usage
    assert isinstance(usage, UsageRecorder)
    backlog = usage.pending()
    started = time.perf_counter()
    usage.flush(timeout=None)
    return {
        "turns_recorded": turns,
        "backlog_at_end": backlog,
        "drain_seconds": round(time.perf_counter() - started, 2),
        "dropped_total": usage.dropped,
        "write_transactions_total": usage.writes,
    }


def usage_cost(
    parts: Components, source: BookSource, profile: ModelProfile, turns: Turns, seconds: float
) -> dict[str, Any]:
    """One thread, alternating 0.25-second windows with and without usage recording (many
    short alternations, so load from other processes hits both sides alike)."""
    samples: dict[bool, list[float]] = {True: [], False: []}
    deadline = time.perf_counter() + seconds
    record = False
    while time.perf_counter() < deadline:
        record = not record
        window = time.perf_counter() + 0.25
        while time.perf_counter() < window:
            msgs = turns.next()
            start = time.perf_counter()
            run_turn(
                parts.services,
                user_id="bench",
                turn=TurnInput(source, tuple(msgs), profile),
                record_usage=record,
            )
            samples[record].append((time.perf_counter() - start) * 1000)
    with_rec, without = sorted(samples[True]), sorted(samples[False])
    # What the turn's own thread pays: queueing one turn's usage (the write happens elsewhere).
    recorder = UsageRecorder(lambda books, entries: None)
    uses = [(f"e{i}", "full") for i in range(20)]
    start = time.perf_counter()
    for _ in range(10_000):
        recorder.record(["book"], uses)
    enqueue_us = (time.perf_counter() - start) / 10_000 * 1e6
    recorder.close()
    p50_with, p50_without = percentile(with_rec, 50), percentile(without, 50)
    return {
        "turns_with": len(with_rec),
        "turns_without": len(without),
        "p50_ms_with": round(p50_with, 3),
        "p50_ms_without": round(p50_without, 3),
        "mean_ms_with": round(statistics.fmean(with_rec), 3),
        "mean_ms_without": round(statistics.fmean(without), 3),
        "p50_added_ms": round(p50_with - p50_without, 3),
        "p50_added_share": round((p50_with - p50_without) / p50_without, 3),
        "enqueue_us_per_turn": round(enqueue_us, 2),
    }


# --- report -----------------------------------------------------------------------------------


PACKAGES = ("worldbook", "fastapi", "starlette", "uvicorn", "httpx", "SQLAlchemy", "psycopg")


def print_table(results: list[dict[str, Any]]) -> None:
    head = f"{'backend':<9} {'path':<12} {'turns/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}"
    print("\n" + head + "\n" + "-" * len(head))
    for r in results:
        for path in ("in_process", "http", "in_process_1", "http_1"):
            s = r[path]
            print(
                f"{r['backend']:<9} {path:<12} {s['turns_per_s']:>8} {s['p50_ms']:>8} "
                f"{s['p99_ms']:>8} {s['errors']:>6}"
            )
        ratio = r["http_over_in_process"]
        share = r["http"].get("turn_share_of_latency")
        usage = r["usage_recording"]
        print(
            f"{'':<9} HTTP/in-process throughput ×{ratio['throughput_ratio']}, p50 "
            f"×{ratio['p50_ratio']}; turn's share of HTTP latency {share}"
        )
        print(
            f"{'':<9} one client: HTTP p50 ×{ratio['p50_ratio_1_client']} "
            f"({ratio['p50_added_ms_1_client']:+} ms), turn's share "
            f"{r['http_1'].get('turn_share_of_latency')}"
        )
        print(
            f"{'':<9} usage recording: p50 {usage['p50_ms_without']} → {usage['p50_ms_with']} ms "
            f"({usage['p50_added_ms']:+} ms, {usage['p50_added_share']:+.1%}); the turn's "
            f"thread pays {usage['enqueue_us_per_turn']} µs to queue it"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--embedder", default="fake")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument(
        "--pg-url", default=os.environ.get("WORLDBOOK_TEST_POSTGRES_URL") or DEFAULT_PG
    )
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="wb-load-") as tmp:
        for backend in args.backends.split(","):
            workdir = Path(tmp) / backend
            workdir.mkdir()
            results.append(bench_backend(backend.strip(), args, workdir))
    print_table(results)
    write_results(
        RESULTS,
        {
            "benchmark": "bench_load",
            "date": now_iso(),
            "machine": machine(),
            "versions": {"python": platform.python_version(), **versions(PACKAGES)},
            "parameters": {
                "seconds": args.seconds,
                "clients": args.clients,
                "entries": args.entries,
                "embedder": args.embedder,
                "server": "uvicorn, 1 worker, loopback",
                "profile": "input_window 32000, cl100k_base, tools",
            },
            "results": results,
        },
    )
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
