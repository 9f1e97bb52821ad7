"""The API on the real PostgreSQL (WORLDBOOK_TEST_POSTGRES_URL, default the local ``test``
database): a smoke run through books, entries, sharing, a turn and usage."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components, new_book
from tests.conftest import _postgres_database

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_client(tmp_path: Path, _postgres: object) -> Iterator[tuple[TestClient, str]]:
    from worldbook.api.app import create_app

    for url in _postgres_database(_postgres, migrated=False):  # type: ignore[arg-type]
        parts = make_components(tmp_path, database_url=url)
        try:
            _, key = parts.services.store.create_api_key("pg")
            with TestClient(create_app(components=parts), raise_server_exceptions=False) as client:
                yield client, key
        finally:
            parts.close()


def test_api_smoke_on_postgres(pg_client: tuple[TestClient, str]) -> None:
    client, key = pg_client
    alice, bob = auth(key, "alice"), auth(key, "bob")
    assert client.get("/ready").json()["parts"]["database"] == {"up": True}
    book = new_book(client, alice, entries=12, visibility="public", tags=["pg"])
    assert [b["id"] for b in client.get("/v1/library?tag=pg", headers=bob).json()["books"]] == [
        book["id"]
    ]
    turn = {"book_ids": [book["id"]], "messages": [{"role": "user", "content": "Entry 3?"}]}
    assert client.post("/v1/select", json=turn, headers=bob).status_code == 200
    usage = client.get(f"/v1/books/{book['id']}/usage", headers=alice).json()
    assert usage["turns"] == 1
    assert (
        client.patch(f"/v1/books/{book['id']}", json={"title": "x"}, headers=bob).status_code == 403
    )
    bad = client.post(
        f"/v1/books/{book['id']}/entries",
        json={"title": "Nul\u0000", "lore": "Some lore that is long enough."},
        headers=alice,
    )
    assert bad.status_code == 422
    copy = client.post(f"/v1/books/{book['id']}/copy", headers=bob).json()
    assert copy["entry_count"] == 12 and copy["owner_id"] == "bob"
