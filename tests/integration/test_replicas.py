"""Replicas proven together (ADR 0018): two ``worldbook serve`` and two ``worldbook worker``
processes on one PostgreSQL database and one Redis.

- a book imported through API A is indexed by the workers (both take tasks) and a turn on
  API B finds its entries by meaning;
- an edit through A is what B's next turn sends (book versions are read from the database on
  every turn), and B's meaning search catches up once a worker re-embedded the entry, never
  through a stale vector (vectors are matched to the entry's current text hash);
- a worker killed in the middle of a batch and an API process killed in the middle of a
  request lose nothing (unacknowledged tasks, the sweep, one transaction per request);
- the classic chat state a turn through A writes is what a turn through B reads.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from tests.integration.replicas import (
    Client,
    Proc,
    api,
    create_key,
    metric,
    stack_env,
    wait_for,
    worker,
)

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.redis]


PHRASE = "obsidian lantern cult gathers beneath tidal arches"
EDITED = "sapphire heron guild weaves copper kites"


def _lore(i: int) -> str:
    if i == 17:
        return f"The {PHRASE} every spring; pilgrims bring salt."
    return f"District {i} keeps its harbour ledgers tidy and its lamplit streets quiet."


@pytest.fixture
def stack(tmp_path: Path, _postgres: Any, redis_url: str) -> Iterator[dict[str, Any]]:
    """Two APIs and two workers on a fresh database and the flushed test Redis (flushed again
    by ``redis_url`` after the processes stop)."""
    from tests.conftest import _postgres_database

    procs: list[Proc] = []
    for url in _postgres_database(_postgres, migrated=True):
        env = stack_env(url, redis_url)
        key = create_key(env)
        try:
            procs += [api("a", env, tmp_path), api("b", env, tmp_path)]
            procs += [worker("w1", env, tmp_path), worker("w2", env, tmp_path)]
            yield {"url": url, "key": key, "env": env, "procs": {p.name: p for p in procs}}
        finally:
            for proc in procs:
                proc.stop()


def _pending(url: str, book_id: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    sa.text(
                        "SELECT count(*) FROM entries WHERE book_id = :b "
                        "AND index_status <> 'indexed'"
                    ),
                    {"b": book_id},
                ).scalar_one()
            )
    finally:
        engine.dispose()


def _vector_rows(url: str, book_id: str) -> tuple[int, int]:
    """(vector rows, entries with at least one) of the book: duplicates would show."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                sa.text(
                    "SELECT count(*), count(DISTINCT v.entry_id) FROM entry_vectors v "
                    "JOIN entries e ON e.id = v.entry_id WHERE e.book_id = :b"
                ),
                {"b": book_id},
            ).one()
            return int(row[0]), int(row[1])
    finally:
        engine.dispose()


def _found_by_meaning(result: dict[str, Any], title: str) -> bool:
    return any(t["title"] == title and t["reason"].startswith("semantic") for t in result["trace"])


def _import(client: Client, title: str, count: int) -> str:
    book = client.call("POST", "/v1/books", json={"title": title})
    entries = [{"title": f"Place {i}", "lore": _lore(i)} for i in range(count)]
    path = f"/v1/books/{book['id']}/entries/batch"
    client.call("POST", path, request_id=f"import-{title}", json={"entries": entries})
    return str(book["id"])


def test_two_apis_and_two_workers_work_as_one(stack: dict[str, Any]) -> None:
    procs, key, url = stack["procs"], stack["key"], stack["url"]
    a, b = Client(procs["a"], key), Client(procs["b"], key)
    book = _import(a, "Harbour", 300)
    wait_for(lambda: _pending(url, book) == 0, "the workers to index the import")
    for name in ("w1", "w2"):  # both workers took tasks
        text = httpx.get(f"http://127.0.0.1:{procs[name].port}/metrics", timeout=10).text
        done = metric(text, "worldbook_celery_tasks_total", outcome="success")
        assert done >= 1, f"{name} took no task:\n{text[:2000]}"
        # The import's request id is on the log lines of the tasks it queued.
        assert "[import-Harbour] indexed" in procs[name].tail(100_000)
    assert _found_by_meaning(b.turn([book], f"Who are the {PHRASE}?"), "Place 17")
    assert "[import-Harbour] POST /v1/books/{book_id}/entries/batch 201" in procs["a"].tail()
    _edit_through_a_is_used_by_b(a, b, book, url)
    _classic_state_crosses_replicas(a, b)
    _killed_worker_loses_nothing(stack, a, b)
    _killed_api_loses_nothing(stack, b)


def _edit_through_a_is_used_by_b(a: Client, b: Client, book: str, url: str) -> None:
    entries = a.call("GET", f"/v1/books/{book}/entries", params={"limit": 500})
    items = entries["entries"] if isinstance(entries, dict) else entries
    [place] = [e for e in items if e["title"] == "Place 17"]
    new_lore = f"The {EDITED} at dusk; nobody remembers the old rites."
    a.call("PATCH", f"/v1/entries/{place['id']}", json={"lore": new_lore})
    # The very next turn on B sends the new text (the book's version is read every turn).
    named = b.turn([book], "Tell me of Place 17.")
    sent = [e["text"] for e in named["injected"] if e["title"] == "Place 17"]
    assert sent and EDITED in sent[0] and PHRASE not in sent[0]

    def caught_up() -> bool:
        result = b.turn([book], f"Who are the {EDITED}?")
        for e in result["injected"]:  # never the old text, at any moment
            assert e["title"] != "Place 17" or PHRASE not in e["text"]
        return _found_by_meaning(result, "Place 17")

    wait_for(caught_up, "B's meaning search to find the edited entry")
    assert _pending(url, book) == 0


def _classic_state_crosses_replicas(a: Client, b: Client) -> None:
    book = a.call("POST", "/v1/books", json={"title": "Keys", "mode": "classic"})
    sticky = {"title": "Sticky", "lore": "Sticky lore.", "keys": ["glue"]}
    sticky["extensions"] = {"sticky": 3}  # type: ignore[assignment]
    a.call("POST", f"/v1/books/{book['id']}/entries/batch", json={"entries": [sticky]})

    def titles(client: Client, text: str, chat: str, length: int) -> list[str]:
        result = client.turn([book["id"]], text, chat_id=chat, chat_length=length)
        return [e["title"] for e in result["injected"]]

    assert titles(a, "glue", "c1", 2) == ["Sticky"]
    assert titles(b, "nothing", "c1", 4) == ["Sticky"]  # B reads the state A wrote
    assert titles(b, "nothing", "c2", 4) == []  # another chat starts fresh
    log = b.call("GET", "/v1/chats/c1/log")
    assert log  # the request log A wrote is readable through B


def _killed_worker_loses_nothing(stack: dict[str, Any], a: Client, b: Client) -> None:
    procs, url = stack["procs"], stack["url"]
    book = _import(a, "Crash", 480)
    wait_for(lambda: _indexing(url, book) > 0, "a batch in flight", 60)
    procs["w1"].kill()  # SIGKILL mid-batch: its unacknowledged task and 'indexing' rows remain
    wait_for(lambda: _pending(url, book) == 0, "the other worker and the sweep to finish")
    rows, entries = _vector_rows(url, book)
    assert entries == 480 and rows == entries  # every entry once, none twice
    assert _found_by_meaning(b.turn([book], f"Who are the {PHRASE}?"), "Place 17")


def _indexing(url: str, book: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return int(
                conn.execute(
                    sa.text(
                        "SELECT count(*) FROM entries WHERE book_id = :b AND "
                        "index_status = 'indexing'"
                    ),
                    {"b": book},
                ).scalar_one()
            )
    finally:
        engine.dispose()


def _killed_api_loses_nothing(stack: dict[str, Any], b: Client) -> None:
    procs, url = stack["procs"], stack["url"]
    a = Client(procs["a"], stack["key"])
    book = a.call("POST", "/v1/books", json={"title": "Interrupted"})
    entries = [{"title": f"Place {i}", "lore": _lore(i)} for i in range(500)]
    outcome: list[Any] = []

    def send() -> None:
        try:
            outcome.append(
                a.call("POST", f"/v1/books/{book['id']}/entries/batch", json={"entries": entries})
            )
        except (httpx.HTTPError, AssertionError) as exc:
            outcome.append(exc)

    sender = threading.Thread(target=send)
    sender.start()
    threading.Event().wait(0.15)  # the request is in flight (500 entries, one transaction)
    procs["a"].kill()
    sender.join(60)
    listed = b.call("GET", f"/v1/books/{book['id']}/entries", params={"limit": 500})
    items = listed["entries"] if isinstance(listed, dict) else listed
    assert len(items) in (0, 500), len(items)  # all or nothing: one transaction
    if items:  # committed before the kill: queued for indexing even if A never sent the task
        wait_for(lambda: _pending(url, book["id"]) == 0, "the sweep to index A's last write")
