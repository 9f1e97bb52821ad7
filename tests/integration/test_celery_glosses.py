"""The glosses' Celery task (ADR 0023) on a real Redis: the index task queues one
``worldbook.write_glosses`` task per book it indexed, and that task runs the worker's gloss job
for the book — or, without a language model, skips.

Needs the Redis at WORLDBOOK_TEST_REDIS_URL (default redis://127.0.0.1:6379/15), flushed before
and after each test. The tasks run in-process (called directly, their messages read from Redis)
and in a real ``celery worker`` (tests/integration/gloss_celery_app.py: the fake embedder and a
gloss job that only records the book ids it gets).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from tests.integration.test_celery_indexing import (
    MODEL_ID,
    REDIS_URL,
    Worker,
    _make_book,
    _wait_for,
    _worker_env,
)
from workers.celery_app import make_celery
from workers.runtime import Indexer
from worldbook.adapters.queues import GLOSS_TASK, INDEX_QUEUE, INDEX_TASK, CeleryIndexQueue
from worldbook.adapters.store import SqlStore, open_store
from worldbook.core.glosses import READER_LANGUAGES_SETTING, Gloss, gloss_model_id
from worldbook.core.store_rules import new_id
from worldbook.errors import InvalidInput, ServiceUnavailable
from worldbook.service.glosses import (
    GlossReport,
    books_with_readers,
    embed_stored_glosses,
    write_book_glosses,
)
from worldbook.service.indexing import request_indexing
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

pytestmark = [pytest.mark.redis, pytest.mark.slow]

NO_MODEL = {"skipped": "no language model configured (WORLDBOOK_LLM_URL)"}


@pytest.fixture
def redis_client(redis_url: str) -> Iterator[redis.Redis]:
    """A client of the flushed test Redis (the ``redis_url`` fixture flushes it)."""
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=2)
    yield client
    client.close()


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'worldbook.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[SqlStore]:
    s = open_store(db_url)
    assert isinstance(s, SqlStore)
    yield s
    s.close()


class GlossJob:
    """The worker's gloss job, recording the books it was asked for."""

    def __init__(self) -> None:
        self.books: list[str] = []

    def __call__(self, book_id: str) -> GlossReport:
        self.books.append(book_id)
        return GlossReport(asked=2, written=1, embedded=1, dropped={"wrong language": 1})


def _app(db_url: str, tmp_path: Path, indexer: Indexer) -> Celery:
    settings = WorldbookSettings(
        broker_url=REDIS_URL, database_url=db_url, embedder="fake", data_dir=tmp_path / "data"
    )
    return make_celery(settings, indexer_factory=lambda: indexer)


def _queued_tasks(client: redis.Redis) -> list[tuple[str, list[Any]]]:
    """The (task name, args) of the messages waiting in the index queue, oldest first."""
    found = []
    for raw in reversed(client.lrange(INDEX_QUEUE, 0, -1)):  # kombu pushes to the head
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        found.append((message["headers"]["task"], args))
    return found


def test_the_index_task_queues_the_glosses_of_the_books_it_indexed(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    glosses = GlossJob()
    app = _app(db_url, tmp_path, Indexer(store, HashingEmbedder(), glosses=glosses))
    book_id, ids = _make_book(store, 6)
    other_id, other_ids = _make_book(store, 2)
    done = app.tasks[INDEX_TASK](ids + other_ids)
    assert done == {"indexed": 8, "stale": 0, "failed": {}}
    assert sorted(_queued_tasks(redis_client)) == sorted(
        [(GLOSS_TASK, [book_id]), (GLOSS_TASK, [other_id])]
    )
    assert glosses.books == []  # queued, not run by the index task
    # Nothing indexed (all current): no gloss task either.
    redis_client.delete(INDEX_QUEUE)
    assert app.tasks[INDEX_TASK](ids)["indexed"] == 0
    assert _queued_tasks(redis_client) == []

    report = app.tasks[GLOSS_TASK](book_id)
    assert glosses.books == [book_id]
    assert report == {
        "asked": 2,
        "written": 1,
        "embedded": 1,
        "dropped": {"wrong language": 1},
        "failed": 0,
    }
    with pytest.raises(InvalidInput):
        app.tasks[GLOSS_TASK]([book_id])
    assert glosses.books == [book_id]


def test_the_index_task_queues_no_gloss_task_for_a_book_without_reader_languages(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    """The worker's filter (build_indexer's): a gloss run of a book without readers would only
    read the book and return, so no task is queued for it."""
    readers = partial(books_with_readers, store=store)
    indexer = Indexer(store, HashingEmbedder(), glosses=GlossJob(), gloss_books=readers)
    app = _app(db_url, tmp_path, indexer)
    _, plain_ids = _make_book(store, 3)
    read_id, read_ids = _make_book(store, 2)
    store.update_book(read_id, settings={READER_LANGUAGES_SETTING: ["ko"]})
    assert app.tasks[INDEX_TASK](plain_ids + read_ids)["indexed"] == 5
    assert _queued_tasks(redis_client) == [(GLOSS_TASK, [read_id])]
    redis_client.delete(INDEX_QUEUE)
    store.update_entry(plain_ids[0], lore="The river town moved upstream.")
    assert app.tasks[INDEX_TASK](plain_ids)["indexed"] == 1
    assert _queued_tasks(redis_client) == []  # only the book without readers was indexed


def test_a_store_outage_in_the_gloss_filter_leaves_the_index_task_done(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    """The entries are indexed before the filter reads the books: an outage then queues no
    gloss task and does not fail (and so retry) the index task."""

    def store_down(_books: Iterable[str]) -> list[str]:
        raise ServiceUnavailable("the database is down")

    indexer = Indexer(store, HashingEmbedder(), glosses=GlossJob(), gloss_books=store_down)
    app = _app(db_url, tmp_path, indexer)
    _, ids = _make_book(store, 2)
    assert app.tasks[INDEX_TASK](ids) == {"indexed": 2, "stale": 0, "failed": {}}
    assert _queued_tasks(redis_client) == []


def test_without_a_model_the_gloss_task_is_skipped_and_never_queued(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    app = _app(db_url, tmp_path, Indexer(store, HashingEmbedder(), glosses=None))
    book_id, ids = _make_book(store, 4)
    assert app.tasks[INDEX_TASK](ids)["indexed"] == 4
    assert _queued_tasks(redis_client) == []
    assert app.tasks[GLOSS_TASK](book_id) == NO_MODEL


def test_without_a_model_the_index_task_embeds_the_stored_glosses(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    """Glosses written earlier (or under another embedder) get this embedder's vectors when
    their book is indexed, with no model and no gloss task."""
    embedder = HashingEmbedder()
    embed = partial(embed_stored_glosses, store=store, embedder=embedder)
    app = _app(db_url, tmp_path, Indexer(store, embedder, glosses=None, gloss_vectors=embed))
    book_id, ids = _make_book(store, 3)
    store.update_book(book_id, settings={READER_LANGUAGES_SETTING: ["ko"]})
    first = store.get_entries(book_id, ids[:1])[0]
    gist = "뱃사공들이 사는 강변 마을이다."
    gloss = Gloss(first.id, "ko", "강변 마을", gist, first.content_hash, "m")
    assert store.save_glosses(book_id, [gloss]) == 1
    view = gloss_model_id(embedder.model_id, "ko")
    assert app.tasks[INDEX_TASK](ids)["indexed"] == 3
    assert _queued_tasks(redis_client) == []
    assert list(store.load_book_vectors(book_id, view).entry_ids) == [first.id]


def test_the_gloss_task_of_a_purged_book_is_skipped(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    embedder = HashingEmbedder()
    job = partial(write_book_glosses, store=store, llm=None, embedder=embedder, model="m")
    app = _app(db_url, tmp_path, Indexer(store, embedder, glosses=job))
    assert app.tasks[GLOSS_TASK](new_id()) == {"skipped": "the book is gone"}
    book_id, _ = _make_book(store, 1)  # no reader languages: nothing to do
    assert app.tasks[GLOSS_TASK](book_id) == GlossReport().as_dict()


def test_a_real_worker_writes_the_glosses_of_the_books_it_indexed(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    book_id, ids = _make_book(store, 20)
    log = tmp_path / "glosses.log"
    env = _worker_env(db_url, REDIS_URL, tmp_path, WORLDBOOK_TEST_GLOSS_LOG=str(log))
    queue = CeleryIndexQueue(REDIS_URL)
    assert request_indexing(store, queue, ids, MODEL_ID)
    worker = Worker("tests.integration.gloss_celery_app", env, tmp_path / "worker.log")
    try:
        _wait_for(lambda: log.exists() and book_id in log.read_text(), "the gloss task", worker)
        assert store.book_index_share(book_id, MODEL_ID) == 1.0
    finally:
        worker.stop()
        queue.close()
    assert log.read_text().split() == [book_id]  # one index message, one gloss task
    assert f"{GLOSS_TASK}[" in worker.log.read_text()


def test_a_real_worker_without_a_model_skips_glosses(
    redis_client: redis.Redis, db_url: str, store: SqlStore, tmp_path: Path
) -> None:
    book_id, ids = _make_book(store, 5)
    queue = CeleryIndexQueue(REDIS_URL)
    assert request_indexing(store, queue, ids, MODEL_ID)
    queue.submit([book_id])  # as `POST /v1/books/{id}/glosses` would, to a worker with no model
    env = _worker_env(db_url, REDIS_URL, tmp_path)
    worker = Worker("tests.integration.gloss_celery_app", env, tmp_path / "worker.log")
    try:
        _wait_for(lambda: str(NO_MODEL) in worker.log.read_text(), "the skipped gloss task", worker)
        _wait_for(lambda: store.book_index_share(book_id, MODEL_ID) == 1.0, "indexing", worker)
    finally:
        worker.stop()
        queue.close()
    assert worker.log.read_text().count(f"{GLOSS_TASK}[") == 2  # received and succeeded: once
