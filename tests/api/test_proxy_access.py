"""What a connection token opens (ADR 0017): its own connection's proxy routes and nothing
else — no management route, no other user's books, nothing once revoked or rotated — and the
upstream key is never returned."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components
from tests.scripted_upstream import Reply, ScriptedUpstream, openai_answer
from worldbook.api.app import create_app
from worldbook.core.drafts import BookDraft, EntryDraft

CHAT = {"model": "m", "messages": [{"role": "user", "content": "Saltreach?"}]}


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    server = ScriptedUpstream().start()
    yield server
    server.stop()


def _client(tmp_path: Path, **settings: Any) -> Iterator[tuple[TestClient, str, str]]:
    with closing(make_components(tmp_path, **settings)) as parts:
        store = parts.services.store
        _, key = store.create_api_key("tests")
        alice = store.create_book("alice", BookDraft(title="Alice's world"))
        store.add_entries(alice.id, [EntryDraft(title="Salt", lore="Salt lore, twenty chars.")])
        bob = store.create_book("bob", BookDraft(title="Bob's secret"))
        with TestClient(create_app(components=parts), raise_server_exceptions=False) as client:
            yield client, key, f"{alice.id} {bob.id}"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[tuple[TestClient, str, str]]:
    yield from _client(tmp_path, secret_key="s3cret")


def _connect(client: TestClient, key: str, user: str, url: str, **fields: Any) -> Any:
    body = {"name": "App", "upstream_url": url, **fields}
    return client.post("/v1/connections", json=body, headers=auth(key, user))


def test_token_opens_no_management_route(
    env: tuple[TestClient, str, str], upstream: ScriptedUpstream
) -> None:
    client, key, books = env
    alice_book = books.split()[0]
    made = _connect(client, key, "alice", upstream.base_url, book_ids=[alice_book])
    token = made.json()["token"]
    for method, path in [
        ("GET", "/v1/books"),
        ("GET", f"/v1/books/{alice_book}"),
        ("GET", "/v1/connections"),
        ("POST", "/v1/select"),
    ]:
        for headers in ({"Authorization": f"Bearer {token}"}, {"X-API-Key": token}):
            answer = client.request(method, path, headers={**headers, "X-Worldbook-User": "alice"})
            assert answer.status_code == 401, (method, path)
    # An API key does not open the proxy either.
    refused = client.post("/openai/v1/chat/completions", json=CHAT, headers=auth(key, "alice"))
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "authentication_error"
    upstream.queue(Reply(body=openai_answer("ok")))
    ok = client.post(
        "/openai/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {token}"}
    )
    assert ok.status_code == 200, ok.text


def test_other_users_books_are_not_reachable(
    env: tuple[TestClient, str, str], upstream: ScriptedUpstream
) -> None:
    client, key, books = env
    bob_book = books.split()[1]
    made = _connect(client, key, "alice", upstream.base_url, book_ids=[bob_book])
    token = made.json()["token"]
    answer = client.post(
        "/openai/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 404
    assert set(answer.json()["error"]) == {"message", "type", "code", "param"}
    assert upstream.seen == []


def test_revoked_and_rotated_tokens(
    env: tuple[TestClient, str, str], upstream: ScriptedUpstream
) -> None:
    client, key, books = env
    made = _connect(client, key, "alice", upstream.base_url, book_ids=[books.split()[0]]).json()
    rotated = client.post(f"/v1/connections/{made['id']}/rotate", headers=auth(key, "alice"))
    assert rotated.status_code == 200 and rotated.json()["token"] != made["token"]
    old = {"x-api-key": made["token"]}
    gone = client.post("/anthropic/v1/messages", json=CHAT, headers=old)
    assert gone.status_code == 401 and gone.json()["type"] == "error"
    # Another user can neither rotate nor revoke it: as if it did not exist.
    for call in (client.post, client.delete):
        path = f"/v1/connections/{made['id']}" + ("/rotate" if call == client.post else "")
        assert call(path, headers=auth(key, "bob")).status_code == 404
    assert client.get("/v1/connections", headers=auth(key, "bob")).json() == []
    revoked = client.delete(f"/v1/connections/{made['id']}", headers=auth(key, "alice"))
    assert revoked.status_code == 200 and revoked.json()["revoked"] is True
    new = {"Authorization": f"Bearer {rotated.json()['token']}"}
    assert client.get("/openai/v1/models", headers=new).status_code == 401


def test_upstream_key_is_sealed_and_never_returned(env: tuple[TestClient, str, str]) -> None:
    client, key, books = env
    made = _connect(
        client,
        key,
        "alice",
        "http://127.0.0.1:9/v1",
        book_ids=[books.split()[0]],
        upstream_key="sk-very-secret",
    )
    assert made.status_code == 201 and made.json()["has_upstream_key"] is True
    listed = client.get("/v1/connections", headers=auth(key, "alice"))
    assert "sk-very-secret" not in made.text + listed.text
    assert made.json()["token"] not in listed.text


def test_upstream_key_without_secret_key_is_refused(tmp_path: Path) -> None:
    for client, key, books in _client(tmp_path):
        made = _connect(
            client,
            key,
            "alice",
            "http://127.0.0.1:9/v1",
            book_ids=[books.split()[0]],
            upstream_key="sk-x",
        )
        assert made.status_code == 422 and "WORLDBOOK_SECRET_KEY" in made.text
        assert made.json()["error"]["field"] == "upstream_key"


def test_allowed_upstreams(tmp_path: Path) -> None:
    for client, key, books in _client(tmp_path, proxy_allowed_upstreams=("api.openai.com",)):
        book = [books.split()[0]]
        refused = _connect(client, key, "alice", "http://127.0.0.1:9/v1", book_ids=book)
        assert refused.status_code == 422 and "not allowed" in refused.text
        allowed = _connect(client, key, "alice", "https://api.openai.com/v1", book_ids=book)
        assert allowed.status_code == 201


def test_an_upstream_that_does_not_answer_in_time_is_504(
    tmp_path: Path, upstream: ScriptedUpstream
) -> None:
    upstream.queue(Reply(body=openai_answer("late"), delay_s=1.0))
    for client, key, books in _client(tmp_path, proxy_timeout_s=0.2):
        made = _connect(client, key, "alice", upstream.base_url, book_ids=[books.split()[0]])
        headers = {"Authorization": f"Bearer {made.json()['token']}"}
        late = client.post("/openai/v1/chat/completions", json=CHAT, headers=headers)
        assert late.status_code == 504, late.text
        assert "WORLDBOOK_PROXY_TIMEOUT_S" in late.json()["error"]["message"]


def test_a_tokenizer_the_server_cannot_load_is_refused_at_creation(
    env: tuple[TestClient, str, str],
) -> None:
    client, key, books = env
    made = _connect(
        client, key, "alice", "http://127.0.0.1:9/v1", book_ids=[books.split()[0]], tokenizer="nope"
    )
    assert made.status_code == 422 and made.json()["error"]["field"] == "tokenizer"
