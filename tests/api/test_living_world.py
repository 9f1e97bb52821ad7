"""The living world through HTTP (ADR 0006): tools in the selection, writes, replay,
limits as errors, undo, regenerate, a person's edit winning, trash and restore."""

from __future__ import annotations

import json
from typing import Any

from fastapi.testclient import TestClient

from tests.api.conftest import new_book
from worldbook.core.living_tools import LORE_APPEND_TOOL_JSON, LORE_CREATE_TOOL_JSON
from worldbook.core.rendering import LOOKUP_TOOL_JSON

Headers = dict[str, str]
LORE = "Port Vel is the pirate city of the north, built on drowned ships."


def living_book(client: TestClient, headers: Headers, **fields: Any) -> str:
    book = new_book(client, headers, settings={"living_world": True}, **fields)
    return str(book["id"])


def write(
    client: TestClient,
    headers: Headers,
    book_id: str,
    tool: str,
    arguments: Any,
    *,
    call_id: str = "call_1",
    message_id: str = "m1",
    swipe: int | None = None,
) -> Any:
    body: dict[str, Any] = {
        "book_id": book_id,
        "chat_id": "chat-1",
        "message_id": message_id,
        "call_id": call_id,
        "tool": tool,
        "arguments": arguments,
    }
    if swipe is not None:
        body["swipe"] = swipe
    return client.post("/v1/writes", json=body, headers=headers)


def turn(book_id: str, text: str = "Where is Port Vel?", **extra: Any) -> dict[str, Any]:
    return {"book_ids": [book_id], "messages": [{"role": "user", "content": text}], **extra}


def test_owner_turns_with_tools_offer_the_write_tools_byte_identically(
    client: TestClient, alice: Headers, bob: Headers
) -> None:
    book_id = living_book(client, alice, entries=3, visibility="unlisted")
    first = client.post("/v1/select", json=turn(book_id, supports_tools=True), headers=alice)
    assert first.status_code == 200, first.text
    body = first.json()
    assert [t["function"]["name"] for t in body["tools"]] == [
        "lookup_lore",
        "lore_create",
        "lore_append",
    ]
    assert body["living_world"] == {"book_id": book_id}
    expected = [
        json.loads(s) for s in (LOOKUP_TOOL_JSON, LORE_CREATE_TOOL_JSON, LORE_APPEND_TOOL_JSON)
    ]
    assert [t["function"] for t in body["tools"]] == expected
    assert [t["input_schema"] for t in body["anthropic"]["tools"]] == [
        t["parameters"] for t in expected
    ]
    # Another turn, another message and another book version: the same bytes.
    added = write(client, alice, book_id, "lore_create", {"title": "Salt Queen", "lore": LORE})
    assert added.status_code == 201, added.text
    second = client.post(
        "/v1/select",
        json=turn(book_id, "Tell me of the Salt Queen.", supports_tools=True),
        headers=alice,
    ).json()
    for key in ("tools",):
        assert json.dumps(second[key]) == json.dumps(body[key])
    assert json.dumps(second["anthropic"]["tools"]) == json.dumps(body["anthropic"]["tools"])
    # Not the owner's turn, or no tools: no write tools.
    others = client.post("/v1/select", json=turn(book_id, supports_tools=True), headers=bob).json()
    assert [t["function"]["name"] for t in others["tools"]] == ["lookup_lore"]
    assert others.get("living_world") is None
    plain = client.post("/v1/preview", json={"book_ids": [book_id], "message": "Hi"}, headers=alice)
    assert plain.json()["tools"] == [] and plain.json().get("living_world") is None


def test_write_answer_replay_and_log(client: TestClient, alice: Headers) -> None:
    book_id = living_book(client, alice)
    created = write(client, alice, book_id, "lore_create", {"title": "Port Vel", "lore": LORE})
    assert created.status_code == 201, created.text
    answer = created.json()
    assert (answer["effect"], answer["state"], answer["replayed"]) == ("created", "live", False)
    assert answer["entry_title"] == "Port Vel" and answer["result"]
    entry = client.get(f"/v1/entries/{answer['entry_id']}", headers=alice).json()
    assert (entry["book_id"], entry["lore"]) == (book_id, LORE)
    # OpenAI sends the arguments as JSON text: the same call, so a replay.
    again = write(
        client, alice, book_id, "lore_create", json.dumps({"title": "Port Vel", "lore": LORE})
    )
    assert again.status_code == 200 and again.json()["replayed"]
    assert again.json()["id"] == answer["id"]
    appended = write(
        client,
        alice,
        book_id,
        "lore_append",
        {"title": "port vel", "text": "Its harbor never freezes."},
        call_id="call_2",
    )
    assert appended.status_code == 201 and appended.json()["effect"] == "appended"
    log = client.get(f"/v1/books/{book_id}/writes", headers=alice).json()["writes"]
    assert [(w["id"], w["tool"], w["chat_id"], w["message_id"], w["state"]) for w in log] == [
        (appended.json()["id"], "lore_append", "chat-1", "m1", "live"),
        (answer["id"], "lore_create", "chat-1", "m1", "live"),
    ]
    book = client.get(f"/v1/books/{book_id}", headers=alice).json()
    assert book["entry_count"] == 1


def test_bad_calls_are_clear_4xx_and_write_nothing(
    client: TestClient, alice: Headers, bob: Headers
) -> None:
    book_id = living_book(client, alice, visibility="unlisted", entries=1)
    cases = [
        ({"title": "X", "lore": LORE}, "arguments.title", "limit_exceeded"),
        ({"title": "Port Vel", "lore": "Too short."}, "arguments.lore", "limit_exceeded"),
        ({"title": "Port Vel", "lore": "x" * 20_001}, "arguments.lore", "limit_exceeded"),
        ({"title": "Port Vel", "lore": LORE, "book": "b1"}, "arguments.book", "invalid_input"),
        ("{not json", "arguments", "invalid_input"),
        ({"title": "Port Vel"}, "arguments.lore", "invalid_input"),
    ]
    for i, (arguments, field, code) in enumerate(cases):
        got = write(client, alice, book_id, "lore_create", arguments, call_id=f"c{i}")
        assert got.status_code == 422, (arguments, got.text)
        assert got.json()["error"]["field"] == field and got.json()["error"]["code"] == code
    both = write(
        client, alice, book_id, "lore_append", {"title": "A", "entry_id": "b", "text": "t"}
    )
    assert both.status_code == 422
    missing = write(client, alice, book_id, "lore_append", {"title": "Nowhere", "text": "Hi."})
    assert missing.status_code == 404 and missing.json()["error"]["field"] == "arguments.title"
    unknown_tool = write(client, alice, book_id, "lore_delete", {"title": "Entry 0"})
    assert unknown_tool.status_code == 422
    assert (
        write(client, bob, book_id, "lore_create", {"title": "Bob's", "lore": LORE}).status_code
        == 403
    )
    plain = str(new_book(client, alice)["id"])
    off = write(client, alice, plain, "lore_create", {"title": "Port Vel", "lore": LORE})
    assert off.status_code == 409 and "living_world" in off.json()["error"]["message"]
    assert client.get(f"/v1/books/{book_id}/writes", headers=alice).json()["writes"] == []
    bad_setting = client.patch(
        f"/v1/books/{plain}", json={"settings": {"living_world": "yes"}}, headers=alice
    )
    assert bad_setting.status_code == 422
    assert bad_setting.json()["error"]["field"] == "book.settings.living_world"


def test_undo_regenerate_edit_conflict_trash_and_restore(
    client: TestClient, alice: Headers
) -> None:
    book_id = living_book(client, alice)
    made = write(client, alice, book_id, "lore_create", {"title": "Port Vel", "lore": LORE}).json()
    entry_id = made["entry_id"]
    fact = write(
        client,
        alice,
        book_id,
        "lore_append",
        {"entry_id": entry_id, "text": "Its harbor never freezes."},
        call_id="c2",
        message_id="m2",
    ).json()
    # A person edits the lore: undoing the append is refused and changes nothing.
    edited_lore = "Port Vel, as its author now tells it. " + LORE
    assert (
        client.patch(
            f"/v1/entries/{entry_id}", json={"lore": edited_lore}, headers=alice
        ).status_code
        == 200
    )
    refused = client.post(f"/v1/writes/{fact['id']}/undo", headers=alice)
    assert refused.status_code == 409, refused.text
    assert client.get(f"/v1/entries/{entry_id}", headers=alice).json()["lore"] == edited_lore
    regen = client.delete("/v1/chats/chat-1/messages/m1/writes", headers=alice)
    assert regen.status_code == 200
    assert regen.json()["undone"] == [] and [k["write"]["id"] for k in regen.json()["kept"]] == [
        made["id"]
    ]

    # A fresh create, regenerated: its entry goes to the trash, and can come back.
    other = write(
        client,
        alice,
        book_id,
        "lore_create",
        {"title": "Salt Queen", "lore": "The Salt Queen rules the flooded south."},
        call_id="c3",
        message_id="m3",
        swipe=0,
    ).json()
    kept_swipe = client.delete("/v1/chats/chat-1/messages/m3/writes?swipe=1", headers=alice).json()
    assert kept_swipe == {"undone": [], "kept": []}
    regen = client.delete("/v1/chats/chat-1/messages/m3/writes?swipe=0", headers=alice).json()
    assert [w["id"] for w in regen["undone"]] == [other["id"]]
    assert (
        regen["undone"][0]["state"] == "undone"
        and regen["undone"][0]["undo_reason"] == "regenerate"
    )
    assert client.get(f"/v1/entries/{other['entry_id']}", headers=alice).status_code == 404
    trash = client.get(f"/v1/books/{book_id}/entries/trash", headers=alice).json()["entries"]
    assert [(e["id"], e["title"], e["write_id"]) for e in trash] == [
        (other["entry_id"], "Salt Queen", other["id"])
    ]
    again = client.delete("/v1/chats/chat-1/messages/m3/writes", headers=alice).json()
    assert again == {"undone": [], "kept": []}  # idempotent
    restored = client.post(f"/v1/entries/{other['entry_id']}/restore", headers=alice)
    assert restored.status_code == 200 and restored.json()["title"] == "Salt Queen"
    assert client.get(f"/v1/books/{book_id}/entries/trash", headers=alice).json()["entries"] == []
    assert client.post(f"/v1/entries/{other['entry_id']}/restore", headers=alice).status_code == 404
    # Undo one write directly; a second undo is harmless.
    third = write(
        client,
        alice,
        book_id,
        "lore_append",
        {"title": "Salt Queen", "text": "Her crown is coral."},
        call_id="c4",
    ).json()
    undone = client.post(f"/v1/writes/{third['id']}/undo", headers=alice)
    assert undone.status_code == 200 and undone.json()["undone"][0]["id"] == third["id"]
    assert client.post(f"/v1/writes/{third['id']}/undo", headers=alice).json()["already_undone"]
    lore = client.get(f"/v1/entries/{other['entry_id']}", headers=alice).json()["lore"]
    assert lore == "The Salt Queen rules the flooded south."


def test_disabled_entries_answer_like_missing_ones(client: TestClient, alice: Headers) -> None:
    book_id = living_book(client, alice, entries=2)
    entries = client.get(f"/v1/books/{book_id}/entries", headers=alice).json()["entries"]
    hidden = entries[0]["id"]
    client.post(
        f"/v1/books/{book_id}/entries/bulk",
        json={"action": "disable", "ids": [hidden]},
        headers=alice,
    )
    ghost = "G" * len(hidden)
    a = write(client, alice, book_id, "lore_append", {"entry_id": hidden, "text": "Gold."})
    b = write(client, alice, book_id, "lore_append", {"entry_id": ghost, "text": "Gold."})
    assert a.status_code == b.status_code == 404
    assert a.text.replace(hidden, ghost) == b.text
    created = write(
        client,
        alice,
        book_id,
        "lore_create",
        {"title": entries[0]["title"], "lore": LORE},
        call_id="c2",
    ).json()
    assert created["effect"] == "created" and created["entry_id"] != hidden
    assert LORE not in client.get(f"/v1/entries/{hidden}", headers=alice).json()["lore"]
