"""An API over a fresh SQLite file with the fake embedder, and callers with and without keys."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from worldbook.adapters.store import open_store
from worldbook.api.app import create_app
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

LORE = "Lore long enough to pass the twenty character minimum of an entry."


def make_components(
    tmp_path: Path, database_url: str | None = None, **settings: object
) -> Components:
    config = WorldbookSettings(
        data_dir=tmp_path,
        database_url=database_url,
        embedder="fake",
        usage_alert_turns=3,
        **settings,  # type: ignore[arg-type]
    )
    store = open_store(config.resolved_database_url())
    return Components(config, store=store, embedder=HashingEmbedder(), start_queue=True)


@dataclass(frozen=True)
class Keys:
    valid: str
    revoked: str


def auth(key: str | None, user: str | None) -> dict[str, str]:
    headers: dict[str, str] = {}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    if user is not None:
        headers["X-Worldbook-User"] = user
    return headers


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[Components]:
    with closing(make_components(tmp_path)) as made:
        yield made


@pytest.fixture
def keys(parts: Components) -> Keys:
    _, valid = parts.services.store.create_api_key("tests")
    revoked_record, revoked = parts.services.store.create_api_key("revoked")
    parts.services.store.revoke_api_key(revoked_record.id)
    return Keys(valid=valid, revoked=revoked)


@pytest.fixture
def app(parts: Components) -> FastAPI:
    return create_app(components=parts)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def alice(keys: Keys) -> dict[str, str]:
    return auth(keys.valid, "alice")


@pytest.fixture
def bob(keys: Keys) -> dict[str, str]:
    return auth(keys.valid, "bob")


def entry_body(i: int, **fields: object) -> dict[str, object]:
    return {"title": f"Entry {i}", "lore": f"{LORE} Number {i}.", **fields}


def new_book(
    client: TestClient, headers: dict[str, str], *, entries: int = 0, **fields: object
) -> dict[str, object]:
    """A book made through the API (public books get their entries first)."""
    visibility = fields.pop("visibility", "private")
    created = client.post("/v1/books", json={"title": "A world", **fields}, headers=headers)
    assert created.status_code == 201, created.text
    book: dict[str, object] = created.json()
    if entries:
        body = {"entries": [entry_body(i) for i in range(entries)]}
        added = client.post(f"/v1/books/{book['id']}/entries/batch", json=body, headers=headers)
        assert added.status_code == 201, added.text
    if visibility != "private":
        changed = client.patch(
            f"/v1/books/{book['id']}", json={"visibility": visibility}, headers=headers
        )
        assert changed.status_code == 200, changed.text
        book = changed.json()
    return book
