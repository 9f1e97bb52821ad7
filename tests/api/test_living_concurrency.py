"""The living world's limits under 8 concurrent writers, through real HTTP (ADR 0006, "Done
when"), on SQLite and on PostgreSQL.

The app runs in uvicorn on a loopback port (its thread pool serves requests in parallel), and
8 client threads send their tool calls at once. The counts are checked against the write log:
no write lost (every 201 is in the log), none counted twice (exactly 30 live, exactly 90
attempts), and a call sent by 8 writers at once is written once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import served
from tests.api.conftest import auth, make_components
from tests.concurrency import run_threads
from tests.conftest import _Postgres, _postgres_database
from worldbook.api.app import create_app
from worldbook.service.components import Components

pytestmark = pytest.mark.slow
WRITERS = 8
LORE = "A place of the drowned coast, remembered by the smugglers who live there."


@dataclass(frozen=True)
class Live:
    base_url: str
    headers: dict[str, str]


def serve(parts: Components) -> AbstractContextManager[str]:
    """The app on a free loopback port, in a uvicorn thread; yields its base URL."""
    return served.serve(create_app(components=parts))


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def live(request: pytest.FixtureRequest, tmp_path: Path, _postgres: _Postgres) -> Iterator[Live]:
    urls: Iterator[str | None] = iter([None])
    if request.param == "postgres":
        urls = _postgres_database(_postgres, migrated=False)
    for url in urls:
        parts = make_components(tmp_path, database_url=url)
        try:
            _, key = parts.services.store.create_api_key("concurrency")
            with serve(parts) as base_url:
                yield Live(base_url, auth(key, "owner"))
        finally:
            parts.close()


def in_parallel(work: Callable[[httpx.Client, int], Any]) -> list[Any]:
    """Run ``work(client, i)`` in 8 threads released together; their results, in order."""
    results: list[Any] = [None] * WRITERS
    with ExitStack() as stack:  # the clients are made before the threads are released
        clients = [stack.enter_context(httpx.Client(timeout=120)) for _ in range(WRITERS)]

        def one(i: int) -> None:
            results[i] = work(clients[i], i)

        assert run_threads(WRITERS, one) == []
    return results


def create_body(book_id: str, title: str, call_id: str) -> dict[str, Any]:
    return {
        "book_id": book_id,
        "chat_id": "chat",
        "message_id": f"m-{call_id}",
        "call_id": call_id,
        "tool": "lore_create",
        "arguments": {"title": title, "lore": LORE},
    }


def test_30_live_and_90_attempts_hold_under_8_concurrent_writers(live: Live) -> None:
    url, headers = live.base_url, live.headers
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        book = client.post("/v1/books", json={"title": "Coast", "settings": {"living_world": True}})
        book_id = book.json()["id"]

    def creates(client: httpx.Client, i: int, rounds: int, tag: str) -> list[tuple[int, Any]]:
        out = []
        for j in range(rounds):
            body = create_body(book_id, f"Place {tag}{i}-{j}", f"{tag}{i}-{j}")
            got = client.post(f"{url}/v1/writes", json=body, headers=headers)
            out.append((got.status_code, got.json()))
        return out

    # Phase 1: 8 writers × 6 calls = 48; exactly 30 are written, 18 refused.
    phase1 = [r for rs in in_parallel(lambda c, i: creates(c, i, 6, "a")) for r in rs]
    statuses = Counter(code for code, _ in phase1)
    assert statuses == {201: 30, 429: 18}, statuses
    refusal = next(body for code, body in phase1 if code == 429)["error"]
    assert "at most 30 live writes in 24 hours" in refusal["message"]
    written = {body["id"] for code, body in phase1 if code == 201}

    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        log = client.get(f"/v1/books/{book_id}/writes?limit=500").json()["writes"]
        assert {w["id"] for w in log} == written  # none lost, none twice
        assert client.get(f"/v1/books/{book_id}").json()["entry_count"] == 30

    # Phase 2: 8 writers undo the 30 writes at once; every slot is free again.
    ids = sorted(written)

    def undo(client: httpx.Client, i: int) -> list[int]:
        return [
            client.post(f"{url}/v1/writes/{w}/undo", headers=headers).status_code
            for w in ids[i::WRITERS]
        ]

    assert [c for cs in in_parallel(undo) for c in cs] == [200] * 30

    # Phase 3: write-and-undo loops: 60 more attempts fit under the cap of 90, the rest 429.
    def churn(client: httpx.Client, i: int) -> list[int]:
        codes = []
        for j in range(10):
            body = create_body(book_id, f"Place b{i}-{j}", f"b{i}-{j}")
            got = client.post(f"{url}/v1/writes", json=body, headers=headers)
            codes.append(got.status_code)
            if got.status_code == 201:
                undone = client.post(f"{url}/v1/writes/{got.json()['id']}/undo", headers=headers)
                assert undone.status_code == 200, undone.text
            else:
                assert "attempts" in got.json()["error"]["message"], got.text
        return codes

    phase3 = Counter(c for cs in in_parallel(churn) for c in cs)
    assert phase3 == {201: 60, 429: 20}, phase3
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        log = client.get(f"/v1/books/{book_id}/writes?limit=500").json()["writes"]
        assert len(log) == 90 and len({w["id"] for w in log}) == 90
        assert {w["state"] for w in log} == {"undone"}
        assert client.get(f"/v1/books/{book_id}").json()["entry_count"] == 0
        trash = client.get(f"/v1/books/{book_id}/entries/trash").json()["entries"]
        assert len(trash) == 90


def test_one_call_sent_by_8_writers_is_written_once(live: Live) -> None:
    url, headers = live.base_url, live.headers
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        book = client.post("/v1/books", json={"title": "Coast", "settings": {"living_world": True}})
        book_id = book.json()["id"]
    body = create_body(book_id, "Port Vel", "call_once")

    def send(client: httpx.Client, i: int) -> tuple[int, str]:
        got = client.post(f"{url}/v1/writes", json=body, headers=headers)
        return got.status_code, got.json()["id"]

    results = in_parallel(send)
    assert sorted(code for code, _ in results) == [200] * 7 + [201]
    assert len({write_id for _, write_id in results}) == 1
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        assert client.get(f"/v1/books/{book_id}").json()["entry_count"] == 1
        assert len(client.get(f"/v1/books/{book_id}/writes").json()["writes"]) == 1
