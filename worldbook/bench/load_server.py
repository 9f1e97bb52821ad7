"""The server side of ``worldbook bench load``: a throwaway database, an indexed book in it,
and ``worldbook serve`` in a subprocess whose memory is read from ``/proc``.

The book is prepared through the library against the same database before the server starts
(indexing with the configured embedder), so the server only ever serves turns.
"""

from __future__ import annotations

import os
import random
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from worldbook.bench.load_client import WORDS
from worldbook.core.drafts import BookDraft, EntryDraft

ENTRIES = 34  # the book of docs/design/benchmarks.md's load runs


@contextmanager
def database(backend: str, workdir: Path, pg_url: str) -> Iterator[str]:
    """A SQLite file in ``workdir``, or a fresh PostgreSQL database next to ``pg_url``'s one
    (dropped afterwards, even when the run fails)."""
    if backend == "sqlite":
        yield f"sqlite:///{workdir / 'load.db'}"
        return
    if backend != "postgres":
        raise ValueError(f"unknown backend {backend!r} (sqlite or postgres)")
    import sqlalchemy as sa

    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    name = f"wb_bench_load_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(pg_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def database_version(url: str) -> str:
    if url.startswith("sqlite"):
        return f"SQLite {sqlite3.sqlite_version}"
    import sqlalchemy as sa

    engine = sa.create_engine(url, poolclass=sa.NullPool)
    try:
        with engine.connect() as conn:
            return f"PostgreSQL {conn.execute(sa.text('SHOW server_version')).scalar()}"
    finally:
        engine.dispose()


def synthetic_drafts(n: int, rng: random.Random) -> list[EntryDraft]:
    """Entries of plain English words (the words the clients' turns are made of)."""
    drafts = []
    for i in range(n):
        title = f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}"
        lore = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 90))).capitalize() + "."
        drafts.append(EntryDraft(title=title, lore=lore, canon=i < 3))
    return drafts


@dataclass(frozen=True)
class PreparedBook:
    book_id: str
    key: str
    titles: list[str]
    entries: int
    index_seconds: float


def prepare_book(url: str, data_dir: Path, embedder: str, entries: int) -> PreparedBook:
    """Create, fill and index the book, and an API key, through the library."""
    from worldbook.service.components import Components
    from worldbook.service.indexing import index_now
    from worldbook.settings import WorldbookSettings

    settings = WorldbookSettings(
        database_url=url, embedder=embedder, data_dir=data_dir, broker_url=None
    )
    parts = Components(settings, start_queue=False)
    try:
        store = parts.services.store
        book = store.create_book("bench", BookDraft(title="Load world"))
        drafts = synthetic_drafts(entries, random.Random(7))
        store.add_entries(book.id, drafts)
        started = time.perf_counter()
        index_now(parts.services, book_id=book.id)
        took = round(time.perf_counter() - started, 1)
        _, key = store.create_api_key("bench")
    finally:
        parts.close()
    return PreparedBook(book.id, key, [d.title for d in drafts], entries, took)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants (uvicorn's supervisor, its workers
    and helpers), from ``/proc``; 0 where ``/proc`` is missing."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total_kb, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except OSError:
            continue
    return round(total_kb / 1024, 1)


def server_threads(workers: int, threads: int = 0) -> int:
    """Torch/BLAS threads per server process: ``threads`` when given, else the cores shared
    among the workers, so two processes on two cores do not oversubscribe them."""
    if threads > 0:
        return threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cores or 1) // workers)


class Server:
    """``worldbook serve --workers N`` on a free loopback port, with its own data directory;
    its output goes to ``server.log`` there (printed when it fails to start)."""

    def __init__(
        self, url: str, data_dir: Path, embedder: str, workers: int, threads: int = 0
    ) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.workers = workers
        self.threads = server_threads(workers, threads)
        self._log_path = data_dir / f"server-{workers}.log"
        env = {k: v for k, v in os.environ.items() if k != "WORLDBOOK_BROKER_URL"}
        env.update(
            WORLDBOOK_DATABASE_URL=url,
            WORLDBOOK_DATA_DIR=str(data_dir),
            WORLDBOOK_EMBEDDER=embedder,
            WORLDBOOK_EMBED_THREADS=str(self.threads),
            OMP_NUM_THREADS=str(self.threads),
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        )
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        cmd = [sys.executable, "-m", "worldbook.cli.main", "serve", "--host", "127.0.0.1",
               "--port", str(self.port), "--workers", str(self.workers)]  # fmt: skip
        with self._log_path.open("wb") as log:
            self._proc = subprocess.Popen(cmd, env=self._env, stdout=log, stderr=log)
        try:
            self._wait_ready(120.0)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_ready(self, timeout: float) -> None:
        import httpx

        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                break
            try:
                if httpx.get(f"{self.base}/ready", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        log = self._log_path.read_text(errors="replace")[-2000:]
        raise RuntimeError(f"worldbook serve did not become ready:\n{log}")

    def rss_mb(self) -> float:
        assert self._proc is not None
        return tree_rss_mb(self._proc.pid)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
