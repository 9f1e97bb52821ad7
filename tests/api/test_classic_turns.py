"""Classic lorebooks through the HTTP API (DESIGN §3): book settings, keys in a turn, chat state
across turns, previews that write nothing, hybrid world books, and the request log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import LORE, auth, make_components
from worldbook.adapters.queues import InProcessIndexQueue
from worldbook.api.app import create_app

Headers = dict[str, str]


def classic_book(
    client: TestClient, headers: Headers, entries: list[dict[str, Any]], **fields: Any
) -> str:
    body = {"title": "Keys", "mode": "classic", **fields}
    made = client.post("/v1/books", json=body, headers=headers)
    assert made.status_code == 201, made.text
    book_id: str = made.json()["id"]
    added = client.post(
        f"/v1/books/{book_id}/entries/batch", json={"entries": entries}, headers=headers
    )
    assert added.status_code == 201, added.text
    return book_id


def turn(
    client: TestClient,
    headers: Headers,
    book_id: str,
    text: str,
    path: str = "/v1/select",
    **more: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {"book_ids": [book_id], **more}
    if path == "/v1/preview":
        body["message"] = text
    else:
        body["messages"] = [{"role": "user", "content": text}]
    got = client.post(path, json=body, headers=headers)
    assert got.status_code == 200, got.text
    result: dict[str, Any] = got.json()
    return result


def sticky(turns: int) -> dict[str, Any]:
    """An entry keyed on "glue" that stays in for ``turns`` turns after it fires."""
    return {
        "title": "Sticky",
        "lore": "Sticky lore.",
        "keys": ["glue"],
        "extensions": {"sticky": turns},
    }


def injected(result: dict[str, Any]) -> list[str]:
    return [e["title"] for e in result["injected"]]


# --- settings --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"scan_depth": 101}, "book.settings.scan_depth"),
        ({"scan_depth": -1}, "book.settings.scan_depth"),
        ({"token_budget": 99}, "book.settings.token_budget"),
        ({"token_budget": 32_001}, "book.settings.token_budget"),
        ({"recursive_scanning": "yes"}, "book.settings.recursive_scanning"),
        ({"min_activations": 101}, "book.settings.min_activations"),
        ({"whole_words": 1}, "book.settings.whole_words"),
    ],
)
def test_book_settings_out_of_range_are_422_naming_the_field(
    client: TestClient, alice: Headers, settings: dict[str, Any], field: str
) -> None:
    made = client.post(
        "/v1/books", json={"title": "K", "mode": "classic", "settings": settings}, headers=alice
    )
    assert made.status_code == 422, made.text
    assert made.json()["error"]["field"] == field
    book = client.post("/v1/books", json={"title": "K", "mode": "classic"}, headers=alice).json()
    patched = client.patch(f"/v1/books/{book['id']}", json={"settings": settings}, headers=alice)
    assert patched.status_code == 422 and patched.json()["error"]["field"] == field


def test_book_settings_in_range_are_kept(client: TestClient, alice: Headers) -> None:
    settings = {"scan_depth": 0, "token_budget": 100, "recursive_scanning": True}
    made = client.post(
        "/v1/books", json={"title": "K", "mode": "classic", "settings": settings}, headers=alice
    )
    assert made.status_code == 201 and made.json()["settings"] == settings


# --- keys in a turn --------------------------------------------------------------------------


def test_a_classic_book_selects_by_its_keys(client: TestClient, alice: Headers) -> None:
    book = classic_book(
        client,
        alice,
        [
            {"title": "Dragon", "lore": "Dragons breathe fire.", "keys": ["dragon"]},
            {"title": "Sky", "lore": "The sky is green.", "constant": True, "order": 200},
            {"title": "Orc", "lore": "Orcs dislike the sun.", "keys": ["orc"], "role": "user"},
        ],
        settings={"scan_depth": 2},
    )
    result = turn(client, alice, book, "hello")
    assert injected(result) == ["Sky"]
    result = turn(client, alice, book, "An orc and a dragon!")
    assert injected(result) == ["Sky", "Dragon", "Orc"]  # higher order first, then the list
    vias = {e["title"]: (e["via"], e["role"], e["text"]) for e in result["injected"]}
    assert vias["Orc"] == ("keyword", "user", "Orcs dislike the sun.")
    assert vias["Sky"][0] == "constant"
    assert result["messages"] == [
        {"role": "system", "content": "The sky is green."},
        {"role": "system", "content": "Dragons breathe fire."},
        {"role": "user", "content": "Orcs dislike the sun."},
    ]
    assert result["anthropic"]["messages"] == [{"role": "user", "content": "Orcs dislike the sun."}]
    assert result["lorebook"] == {
        "budget": 2000,
        "tokens": sum(e["cost"] for e in result["injected"]),
    }
    reasons = {r["title"]: r["reason"] for r in result["trace"]}
    assert reasons["Orc"] == "key 'orc' in message 0"
    summary = turn(client, alice, book, "An orc!", trace="summary")
    assert {r["decision"] for r in summary["trace"]} <= {"injected", "left_out"}


def test_secondary_keys_sent_through_the_api_apply(client: TestClient, alice: Headers) -> None:
    book = classic_book(
        client,
        alice,
        [{"title": "Gate", "lore": "The gate.", "keys": ["gate"], "secondary_keys": ["north"]}],
    )
    assert injected(turn(client, alice, book, "the gate")) == []
    assert injected(turn(client, alice, book, "the north gate")) == ["Gate"]


# --- chat state ------------------------------------------------------------------------------


def test_sticky_and_cooldown_carry_over_turns_of_a_chat(client: TestClient, alice: Headers) -> None:
    book = classic_book(
        client,
        alice,
        [
            sticky(3),
            {"title": "Cool", "lore": "Cool lore.", "keys": ["ice"], "extensions": {"cooldown": 3}},
        ],
    )

    def at(length: int, text: str, **more: Any) -> list[str]:
        return injected(turn(client, alice, book, text, chat_id="c1", chat_length=length, **more))

    assert at(2, "glue and ice") == ["Sticky", "Cool"]
    # a preview of the next turn sees the chat's state and writes none
    preview = turn(client, alice, book, "ice", path="/v1/preview", chat_id="c1", chat_length=4)
    assert injected(preview) == ["Sticky"]
    assert at(4, "ice") == ["Sticky"]  # sticky till 5; cooling till 5
    assert at(6, "ice") == ["Cool"]
    # another chat, and the same chat id of another user, start fresh
    assert injected(turn(client, alice, book, "ice", chat_id="c2", chat_length=4)) == ["Cool"]


def test_a_preview_never_writes_chat_state(client: TestClient, alice: Headers) -> None:
    book = classic_book(client, alice, [sticky(5)])
    turn(client, alice, book, "glue", path="/v1/preview", chat_id="c1", chat_length=2)
    assert injected(turn(client, alice, book, "nothing", chat_id="c1", chat_length=4)) == []
    log = client.get("/v1/chats/c1/log", headers=alice).json()
    assert len(log["turns"]) == 1  # the real turn only


def test_chat_state_is_the_acting_users(client: TestClient, alice: Headers, bob: Headers) -> None:
    book = classic_book(client, alice, [sticky(5)], visibility="private")
    client.patch(f"/v1/books/{book}", json={"visibility": "unlisted"}, headers=alice)
    turn(client, alice, book, "glue", chat_id="shared", chat_length=2)
    assert injected(turn(client, bob, book, "x", chat_id="shared", chat_length=4)) == []
    assert injected(turn(client, alice, book, "x", chat_id="shared", chat_length=4)) == ["Sticky"]


# --- hybrid world books ----------------------------------------------------------------------


@pytest.fixture
def unindexed(tmp_path: Path) -> Iterator[tuple[TestClient, Headers]]:
    """A client (and alice's headers) whose server indexes nothing: world books stay in
    list-order fallback, so what the world path sends does not depend on how far background
    indexing got."""
    folder = tmp_path / "unindexed"
    folder.mkdir()
    parts = make_components(folder)
    assert isinstance(parts.services.queue, InProcessIndexQueue)
    parts.services.queue.close()
    if parts.sweeper is not None:
        parts.sweeper.close()
    _, key = parts.services.store.create_api_key("unindexed")
    try:
        with TestClient(create_app(components=parts), raise_server_exceptions=False) as client:
            yield client, auth(key, "alice")
    finally:
        parts.close()


def test_a_hybrid_book_activates_keyed_entries_by_keyword(
    unindexed: tuple[TestClient, Headers],
) -> None:
    client, alice = unindexed
    entries = [{"title": f"Topic {i}", "lore": f"{LORE} Number {i}. " * 30} for i in range(12)] + [
        {"title": "The Vault", "lore": f"{LORE} Deep below. " * 20, "keys": ["treasure"]},
        {"title": "Law", "lore": f"{LORE} The law.", "canon": True, "keys": ["law"]},
    ]
    made = client.post("/v1/books", json={"title": "W", "mode": "hybrid"}, headers=alice).json()
    book = made["id"]
    added = client.post(f"/v1/books/{book}/entries/batch", json={"entries": entries}, headers=alice)
    assert added.status_code == 201, added.text
    world = turn(client, alice, book, "Where is the treasure? What is the law?")
    by_title = {e["title"]: e for e in world["injected"]}
    # by its key, in the lorebook slot, and out of the world index where list order put it
    assert by_title["The Vault"]["via"] == "keyword"
    assert "The Vault" not in [line["title"] for line in world["index"]]
    assert "Law" not in by_title  # canon: in the stable prefix already, never twice
    assert [e["title"] for e in world["canon"]["entries"]] == ["Law"]
    assert world["lorebook"]["tokens"] == by_title["The Vault"]["cost"]
    assert world["messages"][1]["content"] == by_title["The Vault"]["text"]
    named = turn(client, alice, book, "Tell me about The Vault and the treasure.")
    vault = [e for e in named["injected"] if e["title"] == "The Vault"]
    assert len(vault) == 1 and vault[0]["via"] == "literal"  # named: the world path had it
    plain = client.patch(f"/v1/books/{book}", json={"mode": "world"}, headers=alice)
    assert plain.status_code == 200
    world_only = turn(client, alice, book, "Where is the treasure?")
    assert all(e["via"] != "keyword" for e in world_only["injected"])


# --- request log -----------------------------------------------------------------------------


def test_the_request_log_keeps_what_went_in_and_why(client: TestClient, alice: Headers) -> None:
    book = classic_book(
        client,
        alice,
        [
            {"title": "Dragon", "lore": "Dragons breathe fire.", "keys": ["dragon"]},
            {"title": "Big", "lore": "word " * 300, "keys": ["dragon"], "priority": -5},
        ],
        settings={"token_budget": 100},
    )
    turn(client, alice, book, "a dragon", chat_id="log-1")
    turn(client, alice, book, "nothing", chat_id="log-1")
    log = client.get("/v1/chats/log-1/log", headers=alice)
    assert log.status_code == 200, log.text
    first, second = reversed(log.json()["turns"])
    assert [(i["title"], i["via"], i["reason"]) for i in first["injected"]] == [
        ("Dragon", "keyword", "key 'dragon' in message 0")
    ]
    assert first["left_out"][0]["title"] == "Big"
    assert first["left_out"][0]["reason"].startswith("over_budget: ")
    assert first["budgets"]["lorebook"]["budget"] == 100
    assert second["injected"] == [] and second["id"] > first["id"]
    assert (
        client.get("/v1/chats/log-1/log?limit=1", headers=alice).json()["turns"][0]["id"]
        == (second["id"])
    )


def test_the_request_log_keeps_the_last_turns(client: TestClient, alice: Headers) -> None:
    book = classic_book(client, alice, [{"title": "Dragon", "lore": "Fire.", "keys": ["dragon"]}])
    for i in range(53):
        turn(client, alice, book, f"turn {i}", chat_id="long")
    turns = client.get("/v1/chats/long/log?limit=500", headers=alice).json()["turns"]
    assert len(turns) == 50


def test_the_request_log_shows_only_readable_books(
    client: TestClient, alice: Headers, bob: Headers
) -> None:
    shared = classic_book(
        client, bob, [{"title": "Bob's Dragon", "lore": "Fire.", "keys": ["dragon"]}]
    )
    client.patch(f"/v1/books/{shared}", json={"visibility": "unlisted"}, headers=bob)
    mine = classic_book(
        client, alice, [{"title": "Alice's Dragon", "lore": "Ice.", "keys": ["dragon"]}]
    )
    body = {"book_ids": [mine, shared], "messages": [{"role": "user", "content": "dragon"}]}
    assert (
        client.post("/v1/select", json={**body, "chat_id": "mix"}, headers=alice).status_code == 200
    )
    titles = [
        i["title"]
        for i in client.get("/v1/chats/mix/log", headers=alice).json()["turns"][0]["injected"]
    ]
    assert titles == ["Alice's Dragon", "Bob's Dragon"]
    # Bob reads the same chat id: it is his own chat, and holds nothing of Alice's
    assert client.get("/v1/chats/mix/log", headers=bob).json()["turns"] == []
    # Bob's book turns private: Alice's log no longer shows it
    client.patch(f"/v1/books/{shared}", json={"visibility": "private"}, headers=bob)
    record = client.get("/v1/chats/mix/log", headers=alice).json()["turns"][0]
    assert [i["title"] for i in record["injected"]] == ["Alice's Dragon"]
    assert [b["book_id"] for b in record["books"]] == [mine]
    assert shared not in str(record)
