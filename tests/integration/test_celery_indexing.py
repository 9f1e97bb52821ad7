"""Celery indexing end to end: a real Redis, real `celery worker` processes, an SQLite file.

Needs the Redis at WORLDBOOK_TEST_REDIS_URL (default redis://127.0.0.1:6379/15); that database is
flushed before and after each test. Workers run with the fake embedder (WORLDBOOK_EMBEDDER=fake)
so no model is loaded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.integration.conftest import TEST_REDIS_URL
from worldbook.adapters.queues import INDEX_QUEUE, CeleryIndexQueue
from worldbook.adapters.store import SqlStore, open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.embed_text import chunk_entry_text
from worldbook.core.types import IndexStatus, Message, ModelProfile, Selection, Via
from worldbook.errors import QueueUnavailable
from worldbook.service.components import Components
from worldbook.service.indexing import request_indexing, sweep
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

pytestmark = [pytest.mark.redis, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
REDIS_URL = TEST_REDIS_URL
MODEL_ID = HashingEmbedder().model_id
DEADLINE_S = 120.0  # liveness bound for polling, not a speed assertion


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'worldbook.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    yield s
    s.close()


class Worker:
    """A `celery worker` subprocess in its own process group, stopped by its own pid."""

    def __init__(
        self, app: str, env: dict[str, str], log: Path, concurrency: int = 1, beat: bool = False
    ) -> None:
        self.log = log
        self._out = log.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                app,
                "worker",
                "--pool=prefork",
                f"--concurrency={concurrency}",
                f"--queues={INDEX_QUEUE}",
                "--without-gossip",
                "--without-mingle",
                "--loglevel=INFO",
                *(["--beat"] if beat else []),
            ],
            cwd=REPO,
            env=env,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        start = self.log.stat().st_size if self.log.exists() else 0
        _wait_for(
            lambda: b" ready." in self.log.read_bytes()[start:], "the worker to be ready", self
        )

    def pool_children(self) -> list[int]:
        path = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def kill_all(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        self._out.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._out.close()

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]


def _wait_for(pred: Callable[[], bool], what: str, worker: Worker | None = None) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not pred():
        if worker is not None and worker.proc.poll() is not None:
            pytest.fail(f"worker exited while waiting for {what}:\n{worker.tail()}")
        if time.monotonic() > deadline:
            tail = worker.tail() if worker is not None else ""
            pytest.fail(f"gave up waiting for {what}\n{tail}")
        time.sleep(0.1)


def _worker_env(db_url: str, broker: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORLDBOOK_")}
    env.update(
        WORLDBOOK_DATABASE_URL=db_url,
        WORLDBOOK_BROKER_URL=broker,
        WORLDBOOK_EMBEDDER="fake",
        WORLDBOOK_DATA_DIR=str(tmp_path / "data"),
        OMP_NUM_THREADS="1",
        PYTHONPATH=str(REPO),
    )
    env.update(extra)
    return env


def _make_book(store: SqlStore, n: int, *, long_every: int = 0) -> tuple[str, list[str]]:
    book = store.create_book("tester", BookDraft(title="Integration world"))
    drafts = []
    for i in range(n):
        lore = f"Entry number {i} tells of the river town of Vell{i} and its ferrymen. " * 3
        if long_every and i % long_every == 0:
            lore = " ".join(f"Sentence {j} of the long chronicle of Vell{i}." for j in range(300))
        drafts.append(EntryDraft(title=f"Place {i}", lore=lore, aliases=[f"Vell{i}"]))
    added = store.add_entries(book.id, drafts)
    return book.id, [e.id for e in added]


def _vector_rows(db_url: str) -> dict[str, int]:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT entry_id, COUNT(*) FROM entry_vectors WHERE model_id = :m "
                    "GROUP BY entry_id"
                ),
                {"m": MODEL_ID},
            ).all()
    finally:
        engine.dispose()
    return {str(r[0]): int(r[1]) for r in rows}


def _expected_rows(store: SqlStore, ids: list[str]) -> dict[str, int]:
    max_units = HashingEmbedder().max_passage_chars
    out = {}
    for work in store.entries_to_index(MODEL_ID, entry_ids=ids):
        out[work.entry_id] = len(chunk_entry_text(work.text, max_units))
    return out


def _statuses(store: SqlStore, ids: list[str]) -> dict[str, IndexStatus]:
    return {i: store.get_entry(i).index_status for i in ids}


def test_a_real_worker_indexes_an_imported_book(
    redis_url: str, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    book_id, ids = _make_book(store, 30, long_every=10)
    expected = _expected_rows(store, ids)
    assert any(n > 1 for n in expected.values())  # long lore is chunked
    queue = CeleryIndexQueue(redis_url)
    assert request_indexing(store, queue, ids, MODEL_ID)
    assert set(_statuses(store, ids).values()) == {IndexStatus.QUEUED}
    worker = Worker(
        "workers.celery_app", _worker_env(db_url, redis_url, tmp_path), tmp_path / "worker.log"
    )
    try:
        _wait_for(
            lambda: store.book_index_share(book_id, MODEL_ID) == 1.0,
            "the book to be indexed",
            worker,
        )
    finally:
        worker.stop()
        queue.close()
    assert _vector_rows(db_url) == expected
    assert set(_statuses(store, ids).values()) == {IndexStatus.INDEXED}


def _enqueue_in_chunks(queue: CeleryIndexQueue, ids: list[str], size: int) -> None:
    for start in range(0, len(ids), size):
        queue.enqueue(ids[start : start + size])


@pytest.mark.parametrize("kill", ["whole-worker", "pool-process"])
def test_a_worker_killed_mid_batch_leaves_every_entry_indexed_once(
    kill: str, redis_url: str, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    book_id, ids = _make_book(store, 48)
    expected = _expected_rows(store, ids)
    queue = CeleryIndexQueue(redis_url)
    _enqueue_in_chunks(queue, ids, 8)
    env = _worker_env(
        db_url,
        redis_url,
        tmp_path,
        WORLDBOOK_INDEX_BATCH_SIZE="4",
        WORLDBOOK_TEST_EMBED_DELAY_S="0.3",
    )
    app = "tests.integration.slow_celery_app"
    worker = Worker(app, env, tmp_path / "worker.log")
    try:

        def mid_batch() -> bool:
            statuses = _statuses(store, ids)
            done = sum(s == IndexStatus.INDEXED for s in statuses.values())
            return done >= 4 and IndexStatus.INDEXING in statuses.values()

        _wait_for(mid_batch, "a batch in flight after some were indexed", worker)
        if kill == "whole-worker":
            worker.kill_all()
        else:
            children = worker.pool_children()
            assert children, "the prefork pool has a child process"
            os.kill(children[0], signal.SIGKILL)
        assert store.book_index_share(book_id, MODEL_ID) < 1.0
        if kill == "whole-worker":
            # Its unacknowledged message waits for Redis' visibility timeout; the sweep does not.
            worker = Worker(app, env, tmp_path / "worker.log")
            assert sweep(store, queue, MODEL_ID) > 0
        # A lost pool process is replaced and its task re-delivered (acks_late +
        # reject_on_worker_lost), with no sweep.
        _wait_for(
            lambda: store.book_index_share(book_id, MODEL_ID) == 1.0,
            "every entry to be indexed after the crash",
            worker,
        )
    finally:
        worker.stop()
        queue.close()
    assert _vector_rows(db_url) == expected  # exactly one vector row per chunk, none twice
    assert set(_statuses(store, ids).values()) == {IndexStatus.INDEXED}


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_with_redis_down_turns_are_answered_and_indexing_resumes_when_it_returns(
    redis_url: str, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    down_url = f"redis://127.0.0.1:{_closed_port()}/15"  # Redis "stopped": nothing listens
    down = CeleryIndexQueue(down_url, connect_timeout_s=1.0)
    with pytest.raises(QueueUnavailable):
        down.enqueue(["any"])
    assert not down.healthy()
    book_id, ids = _make_book(store, 60)
    assert request_indexing(store, down, ids, MODEL_ID) is False  # the write stands
    down.close()
    assert set(_statuses(store, ids).values()) == {IndexStatus.QUEUED}

    # A turn is still answered, by names and list order (DESIGN §2 rule 6).
    from worldbook.service.cast import BookSource
    from worldbook.service.turns import select_turn

    config = WorldbookSettings(
        database_url=db_url, broker_url=down_url, embedder="fake", data_dir=tmp_path / "data"
    )
    parts = Components(config, store=store, embedder=HashingEmbedder(), start_queue=False)
    parts.services.enqueue(ids)  # what an edit does: logs the outage, raises nothing

    def turn(text: str) -> Selection:
        return select_turn(
            parts.services,
            user_id="tester",
            source=BookSource(book_ids=(book_id,)),
            messages=[Message(role="user", content=text)],
            profile=ModelProfile(input_window=2048),
        ).selection

    named = turn("What do the ferrymen of Vell7 carry?")
    assert {e.ref.entry_id: e.via for e in named.injected}.get(ids[7]) == Via.LITERAL
    unnamed = turn("Tell me something about this world.")
    assert unnamed.injected and {e.via for e in unnamed.injected} == {Via.ORDER}
    assert unnamed.injected[0].ref.entry_id == ids[0]  # plain list order
    assert book_id in unnamed.fallback_books

    # Redis is back: a worker with the beat schedule sweeps the queued entries in.
    env = _worker_env(db_url, redis_url, tmp_path, WORLDBOOK_SWEEP_INTERVAL_S="10")
    worker = Worker("workers.celery_app", env, tmp_path / "worker.log", beat=True)
    up = CeleryIndexQueue(redis_url)
    try:
        _wait_for(
            lambda: store.book_index_share(book_id, MODEL_ID) == 1.0,
            "the beat sweep to resume indexing",
            worker,
        )
        assert sweep(store, up, MODEL_ID) == 0
    finally:
        worker.stop()
        up.close()
    assert _vector_rows(db_url) == dict.fromkeys(ids, 1)
    assert "worldbook.sweep" in worker.log.read_text()


def test_one_sweep_per_interval_however_many_workers_beat(redis_url: str) -> None:
    # Beat is on by default in every `worldbook worker`; the sweep task takes this lock first.
    first, second = CeleryIndexQueue(redis_url), CeleryIndexQueue(redis_url)
    try:
        assert first.claim("sweep", ttl_s=30) is True
        assert second.claim("sweep", ttl_s=30) is False
        assert first.claim("other", ttl_s=30) is True
    finally:
        first.close()
        second.close()
