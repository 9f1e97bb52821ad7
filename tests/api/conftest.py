"""An API over a fresh SQLite file with the fake embedder, and callers with and without keys."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.scripted_upstream import ScriptedUpstream
from tests.served import TIMEOUT, serve
from worldbook.adapters.store import open_store
from worldbook.api.app import create_app
from worldbook.core.drafts import BookDraft, EntryDraft
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


# --- the proxy (ADR 0017) served for the official SDKs, against a scripted upstream -------
PROXY_LORE = "The salt towers of Saltreach hold the drowned archive; its keeper is Vessa the blind."
UPSTREAM_KEY = "sk-upstream-secret"


@dataclass
class Proxy:
    url: str
    parts: Components
    upstream: ScriptedUpstream
    headers: dict[str, str]  # alice's API key
    book_id: str

    def connect(self, **fields: Any) -> dict[str, Any]:
        body = {
            "name": "Tavern",
            "upstream_url": self.upstream.base_url,
            "upstream_key": UPSTREAM_KEY,
            "book_ids": [self.book_id],
            **fields,
        }
        made = httpx.post(
            f"{self.url}/v1/connections", json=body, headers=self.headers, timeout=TIMEOUT
        )
        assert made.status_code == 201, made.text
        created: dict[str, Any] = made.json()
        return created


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[Proxy]:
    """The app served on loopback, alice's book of two entries, a scripted upstream."""
    upstream = ScriptedUpstream().start()
    with closing(make_components(tmp_path, secret_key="a test secret")) as parts:
        store = parts.services.store
        _, key = store.create_api_key("tests")
        book = store.create_book("alice", BookDraft(title="Saltreach"))
        drafts = [
            EntryDraft(title="Saltreach", lore=PROXY_LORE, canon=True),
            EntryDraft(title="Vessa", lore="Vessa keeps the archive and never leaves it."),
        ]
        store.add_entries(book.id, drafts)
        try:
            with serve(create_app(components=parts)) as url:
                yield Proxy(url, parts, upstream, auth(key, "alice"), book.id)
        finally:
            upstream.stop()
