"""HTTP load: ``worldbook bench load`` (docs/design/benchmarks.md).

The server runs as its own process(es): ``worldbook serve --workers N`` on a free loopback
port, with the configured (default: e5-small) embedder, torch threads capped to the cores per
process. The clients run in another process (``worldbook.bench.load_client``): threads with
one httpx client each, every turn's newest user message new, so each turn embeds one message.
The book (34 entries, as in the issue) is indexed through the library against the same
database before the server starts: a SQLite file, or a fresh PostgreSQL database dropped after.

Matrix: backends × server processes × clients, ``seconds`` per cell (default 120 s; the full
default matrix is 12 cells, 24 minutes). Per cell: turns/s, p50/p99, errors, the server's own
turn time from ``Server-Timing``, and the server's RSS (all its processes) at the start and end
of the cell — the caches are bounded, so RSS may grow while they fill, then stays flat.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from worldbook.bench.common import LoadOptions
from worldbook.bench.load_server import (
    PreparedBook,
    Server,
    database,
    database_version,
    prepare_book,
)

TARGET_SPEEDUP = 1.6  # 8 clients vs 1, one process
TARGET_P99_8_MS = 100.0
TARGET_P99_32_MS = 400.0


def run_load(
    embedder: str, options: LoadOptions, *, step: Callable[[str], None] = lambda _: None
) -> dict[str, Any]:
    """Run the matrix; the raw results (cells, ratios, targets) as a JSON-able dict."""
    cells: list[dict[str, Any]] = []
    backends: dict[str, Any] = {}
    seeds = iter(range(1, 1_000_000))
    with tempfile.TemporaryDirectory(prefix="wb-bench-load-") as tmp:
        for backend in options.backends:
            workdir = Path(tmp) / backend
            workdir.mkdir()
            backends[backend] = _run_backend(
                backend, workdir, embedder, options, step, cells, seeds
            )
    parameters = {k: v for k, v in asdict(options).items() if k != "pg_url"}
    return {
        "parameters": {**parameters, "embedder": embedder, "server": "worldbook serve"},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "backends": backends,
        "cells": cells,
        "ratios": ratios(cells),
        "targets": targets(cells),
    }


def _run_backend(
    backend: str,
    workdir: Path,
    embedder: str,
    options: LoadOptions,
    step: Callable[[str], None],
    cells: list[dict[str, Any]],
    seeds: Any,
) -> dict[str, Any]:
    with database(backend, workdir, options.pg_url) as url:
        step(f"load: {backend}: indexing a {options.entries}-entry book")
        book = prepare_book(url, workdir, embedder, options.entries)
        info: dict[str, Any] = {
            "database": database_version(url),
            "entries": book.entries,
            "index_seconds": book.index_seconds,
            "threads_per_process": {},
        }
        for workers in options.workers:
            step(f"load: {backend}: starting {workers} server process(es), warming up")
            with Server(url, workdir, embedder, workers, options.threads) as server:
                info["threads_per_process"][str(workers)] = server.threads
                info.setdefault("warm_up", {})[str(workers)] = _warm_up(
                    server, book, seeds, min(5.0, options.seconds)
                )
                for clients in options.clients:
                    step(
                        f"load: {backend}, {workers} process(es), {clients} clients, "
                        f"{options.seconds:.0f} s"
                    )
                    cells.append(_cell(server, book, backend, clients, options, next(seeds)))
    return info


def _warm_up(
    server: Server, book: PreparedBook, seeds: Any, seconds: float
) -> list[dict[str, Any]]:
    """Before anything counts: one turn per client loads the model in every process (the
    first turn waits for it), then a few seconds of turns warm the caches and the engine."""
    workers = server.workers
    return [
        _clients(server, book, 2 * workers, 0.1, next(seeds)),
        _clients(server, book, 4 * workers, seconds, next(seeds)),
    ]


def _cell(
    server: Server,
    book: PreparedBook,
    backend: str,
    clients: int,
    options: LoadOptions,
    seed: int,
) -> dict[str, Any]:
    rss_start = server.rss_mb()
    result = _clients(server, book, clients, options.seconds, seed)
    rss_end = server.rss_mb()
    return {
        "backend": backend,
        "workers": server.workers,
        "clients": clients,
        **result,
        "rss_start_mb": rss_start,
        "rss_end_mb": rss_end,
        "rss_growth_mb": round(rss_end - rss_start, 1),
    }


def _clients(
    server: Server, book: PreparedBook, clients: int, seconds: float, seed: int
) -> dict[str, Any]:
    """Run the client process for one cell; its summary."""
    job = {
        "base": server.base,
        "key": book.key,
        "book_id": book.book_id,
        "titles": book.titles,
        "clients": clients,
        "seconds": seconds,
        "seed": seed,
    }
    done = subprocess.run(
        [sys.executable, "-m", "worldbook.bench.load_client"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        timeout=seconds + 180,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load client failed ({done.returncode}):\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _find(cells: list[dict[str, Any]], backend: str, workers: int, clients: int) -> Any:
    for cell in cells:
        if (cell["backend"], cell["workers"], cell["clients"]) == (backend, workers, clients):
            return cell
    return None


def ratios(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turns/s of each client count over one client's, per backend and server processes."""
    rows = []
    for base in (c for c in cells if c["clients"] == 1 and c["turns_per_s"]):
        for cell in cells:
            if (cell["backend"], cell["workers"]) == (base["backend"], base["workers"]) and (
                cell["clients"] > 1
            ):
                rows.append(
                    {
                        "backend": base["backend"],
                        "workers": base["workers"],
                        "clients": cell["clients"],
                        "vs_1_client": round(cell["turns_per_s"] / base["turns_per_s"], 2),
                    }
                )
    return rows


def targets(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The load targets (docs/design/benchmarks.md), for one server process, per backend (where
    the cells ran)."""
    rows: list[dict[str, Any]] = []

    def add(name: str, value: float, goal: str, met: bool) -> None:
        rows.append({"target": name, "value": value, "goal": goal, "met": met})

    for backend in dict.fromkeys(c["backend"] for c in cells):
        one, eight = _find(cells, backend, 1, 1), _find(cells, backend, 1, 8)
        many = _find(cells, backend, 1, 32)
        if one and eight and one["turns_per_s"]:
            speedup = round(eight["turns_per_s"] / one["turns_per_s"], 2)
            add(f"load {backend}, 1 process: 8 clients / 1 client turns/s", speedup,
                f">= {TARGET_SPEEDUP}", speedup >= TARGET_SPEEDUP)  # fmt: skip
        if eight:
            add(f"load {backend}, 1 process, 8 clients: p99 ms", eight["p99_ms"],
                f"<= {TARGET_P99_8_MS:.0f}", eight["p99_ms"] <= TARGET_P99_8_MS)  # fmt: skip
        if many:
            add(f"load {backend}, 1 process, 32 clients: errors", many["errors"], "0",
                many["errors"] == 0)  # fmt: skip
            add(f"load {backend}, 1 process, 32 clients: p99 ms", many["p99_ms"],
                f"<= {TARGET_P99_32_MS:.0f}", many["p99_ms"] <= TARGET_P99_32_MS)  # fmt: skip
    return rows
