"""The process's Prometheus metrics (ADR 0018): one set, built on first use, never at import.

Two modes, chosen explicitly when the set is built:

- **multiprocess**: ``PROMETHEUS_MULTIPROC_DIR`` names a directory (``worldbook serve`` makes
  one per run before its workers fork, :mod:`worldbook.runtime.metrics_dir`). Every process
  writes its values to files there and a scrape of any process reads them all;
- **single process** (no directory: the library, the CLI, in-process tests): values live in
  this process's memory and :func:`exposition` reads this registry.

prometheus-client picks its value class from the environment when it is imported, and a
multiprocess value created after the variable was removed fails with a ``TypeError`` (it joins
``None`` into a path). :func:`metrics` therefore sets the value class itself from the directory
it saw, so the mode of a process never changes behind its metrics' back.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client.multiprocess import MultiProcessCollector

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


@dataclass(frozen=True, slots=True)
class Metrics:
    """Every metric family worldbook reports (names in README "Operating worldbook")."""

    directory: Path | None
    registry: CollectorRegistry
    turn_stage: Histogram
    turn: Histogram
    embed_batch: Histogram
    embed_wait: Histogram
    query_cache: Counter
    cache_size: Gauge
    cache_builds: Counter
    cache_evictions: Counter
    tasks: Counter
    task_retries: Counter
    living_writes: Counter
    http: Counter
    http_seconds: Histogram
    rss: Gauge


_lock = threading.Lock()
_built: list[Metrics] = []


def multiproc_dir() -> Path | None:
    """The multiprocess directory this process was started with, if it names a directory."""
    raw = os.environ.get(MULTIPROC_ENV)
    if not raw or not Path(raw).is_dir():
        return None
    return Path(raw)


def metrics() -> Metrics:
    """The process's metrics, built once (the mode is fixed then; see the module doc)."""
    with _lock:
        if not _built:
            _built.append(_build(multiproc_dir()))
        return _built[0]


def _build(directory: Path | None) -> Metrics:
    if directory is None:
        # Explicitly the in-memory values, whatever the environment said at import time.
        values.ValueClass = values.MutexValue
    else:
        values.ValueClass = values.MultiProcessValue()  # type: ignore[no-untyped-call]
    # In multiprocess mode the metrics are not registered anywhere: the files are the truth
    # and a scrape reads them through a fresh MultiProcessCollector (exposition()).
    registry = CollectorRegistry(auto_describe=True)
    reg = registry if directory is None else None
    return Metrics(
        directory=directory, registry=registry, **_turn_metrics(reg), **_process_metrics(reg)
    )


def _turn_metrics(reg: CollectorRegistry | None) -> dict[str, Any]:
    """Turns, query embedding and the caches they use."""
    cache = ("cache",)
    return {
        "turn_stage": Histogram(
            "worldbook_turn_stage_seconds",
            "Time of each stage of a turn: resolve_books, literal_match, query_embedding, "
            "vector_search, selection, rendering.",
            ("stage",),
            buckets=LATENCY_BUCKETS,
            registry=reg,
        ),
        "turn": Histogram(
            "worldbook_turn_seconds",
            "Whole turns by path: whole_book, literal, semantic, classic.",
            ("path",),
            buckets=LATENCY_BUCKETS,
            registry=reg,
        ),
        "embed_batch": Histogram(
            "worldbook_embed_batch_size",
            "Query texts per model call of the dynamic batcher.",
            buckets=BATCH_BUCKETS,
            registry=reg,
        ),
        "embed_wait": Histogram(
            "worldbook_embed_queue_wait_seconds",
            "How long a turn's texts waited for their model call.",
            buckets=LATENCY_BUCKETS,
            registry=reg,
        ),
        "query_cache": Counter(
            "worldbook_query_cache",
            "Query-embedding cache lookups by result (hit, miss).",
            ("result",),
            registry=reg,
        ),
        "cache_size": Gauge(
            "worldbook_cache_items",
            "Items in the in-memory caches (vector_index, matcher) per process.",
            cache,
            multiprocess_mode="liveall",
            registry=reg,
        ),
        "cache_builds": Counter(
            "worldbook_cache_builds", "Builds of cached indexes and matchers.", cache, registry=reg
        ),
        "cache_evictions": Counter(
            "worldbook_cache_evictions", "Items evicted by the cache bounds.", cache, registry=reg
        ),
    }


def _process_metrics(reg: CollectorRegistry | None) -> dict[str, Any]:
    """Tasks, living-world writes, HTTP and the process itself."""
    return {
        "tasks": Counter(
            "worldbook_celery_tasks",
            "Celery tasks by task name and outcome (success, failure, retry).",
            ("task", "outcome"),
            registry=reg,
        ),
        "task_retries": Counter(
            "worldbook_celery_task_retries", "Celery task retries.", ("task",), registry=reg
        ),
        "living_writes": Counter(
            "worldbook_living_writes",
            "Living-world writes by outcome (written, replayed, refused) and refusal code.",
            ("outcome", "code"),
            registry=reg,
        ),
        "http": Counter(
            "worldbook_http_responses",
            "HTTP responses by method, route template and status.",
            ("method", "route", "status"),
            registry=reg,
        ),
        "http_seconds": Histogram(
            "worldbook_http_request_seconds",
            "HTTP request time by route template.",
            ("route",),
            buckets=LATENCY_BUCKETS,
            registry=reg,
        ),
        "rss": Gauge(
            "worldbook_process_rss_bytes",
            "Resident set size of each live worldbook process.",
            multiprocess_mode="liveall",
            registry=reg,
        ),
    }


def rss_bytes() -> int:
    """This process's resident set size (Linux /proc; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


def exposition(*extra: object) -> bytes:
    """The Prometheus text of every process (multiprocess) or of this one, plus ``extra``
    collectors (registered on a throw-away registry, so nothing accumulates)."""
    found = metrics()
    found.rss.set(rss_bytes())
    registry = CollectorRegistry(auto_describe=False)
    if found.directory is not None:
        MultiProcessCollector(registry, path=str(found.directory))  # type: ignore[no-untyped-call]
    else:
        registry = found.registry
    for collector in extra:
        registry.register(collector)  # type: ignore[arg-type]
    try:
        return generate_latest(registry)
    finally:
        for collector in extra:
            registry.unregister(collector)  # type: ignore[arg-type]


def serve_metrics(port: int, host: str = "0.0.0.0") -> None:
    """Serve :func:`exposition` on ``port`` from a daemon thread (a Celery worker's /metrics).

    A worker has no HTTP API of its own; the port belongs on a private network (deploy/)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = exposition()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE_LATEST)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:  # scrapes are not log lines
            return

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, name="worldbook-metrics", daemon=True).start()
