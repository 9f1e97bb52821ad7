"""The diversified meaning ranking through POST /v1/select (ADR 0021): near-duplicates of a
message's first topic give way to its second, and the setting off answers as before."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components
from worldbook.api.app import create_app

DRAGON = "dragon fire cave mountain smoke ash " * 4
ENTRIES = [
    *({"title": f"Ember {n}", "lore": DRAGON + n} for n in ("Hollow", "Roost", "Hold")),
    {"title": "Tidewater", "lore": "harbour boats quay nets gulls tar " * 4},
    *(
        {"title": f"Ledger {i}", "lore": " ".join(f"w{i}x{j}" for j in range(150))}
        for i in range(60)
    ),
]
MESSAGE = "The dragon fire cave mountain smoke ash, dragon fire cave smoke; and the harbour?"


@contextmanager
def _client(tmp_path: Path, diversity: float = 0.0) -> Iterator[tuple[TestClient, dict[str, str]]]:
    tmp_path.mkdir()
    with closing(make_components(tmp_path, diversity=diversity)) as parts:
        _, key = parts.services.store.create_api_key("tests")
        with TestClient(create_app(components=parts)) as client:
            headers = auth(key, "alice")
            made = client.post("/v1/books", json={"title": "Lore"}, headers=headers)
            book_id = made.json()["id"]
            added = client.post(
                f"/v1/books/{book_id}/entries/batch", json={"entries": ENTRIES}, headers=headers
            )
            assert added.status_code == 201, added.text
            assert parts.services.queue.wait_idle(60)  # type: ignore[attr-defined]
            headers["X-Book"] = book_id
            yield client, headers


def _select(client: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    body = {
        "book_ids": [headers["X-Book"]],
        "messages": [{"role": "user", "content": MESSAGE}],
        "input_window": 8192,
    }
    got = client.post("/v1/select", json=body, headers=headers)
    assert got.status_code == 200, got.text
    result: dict[str, Any] = got.json()
    return result


def _scores(body: dict[str, Any]) -> dict[str, float]:
    found = (
        (r["title"], re.search(r"semantic: score (-?[0-9.]+)", r["reason"])) for r in body["trace"]
    )
    return {title: float(m.group(1)) for title, m in found if m}


def test_select_diversifies_the_top_of_the_meaning_ranking(tmp_path: Path) -> None:
    with _client(tmp_path / "off") as (client, headers):
        before = _select(client, headers)
        again = _select(client, headers)
    with _client(tmp_path / "on", diversity=3.0) as (client, headers):
        after = _select(client, headers)
    assert before["injected"] == again["injected"]
    plain, diverse = _scores(before), _scores(after)
    dragons = [f"Ember {n}" for n in ("Hollow", "Roost", "Hold")]
    assert all(plain[d] > plain["Tidewater"] for d in dragons)
    assert diverse["Tidewater"] == plain["Tidewater"]
    assert sum(diverse[d] > diverse["Tidewater"] for d in dragons) == 1
