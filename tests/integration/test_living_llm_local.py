"""The living world's tool loop against a real model server (ADR 0006).

The app's side of the loop, as a roleplay app would run it: select the turn's lore with tools,
give the selection's system messages and tools to the model, forward every ``lore_create`` /
``lore_append`` call the model makes to ``POST /v1/writes`` with the tool call's id, and hand
the answer back. SmolLM2-135M (xllamacpp, one thread) has no tool template, so it rarely calls
a tool; the test forwards whatever it does call, then asks it for a ``lore_create`` call's
arguments with the tool's own parameters as the JSON schema (the forced-tool-use analogue) and
forwards that — the real model is the validators' adversary. A scripted model drives the same
loop with known calls, so every branch of the contract is checked every run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components
from tests.integration.local_llm import LocalLLMServer
from tests.llm_fakes import ScriptedLLM
from worldbook.adapters.llm import OpenAICompatibleLLM
from worldbook.api.app import create_app
from worldbook.core.living_tools import WRITE_TOOLS
from worldbook.errors import LLMTruncated
from worldbook.llm_port import LLM, LLMMessage, LLMRequest, LLMResult, LLMToolCall

SCENE = (
    "We sail into Port Vel at dusk. The harbor master says the Drowned Rat tavern now "
    "belongs to Captain Mirela, who won it at cards from the Iron Guild."
)
PORT_VEL = "Port Vel is the pirate city of the north, built on the hulls of drowned ships."


@pytest.fixture()
def app_client(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    parts = make_components(tmp_path)
    try:
        _, key = parts.services.store.create_api_key("llm loop")
        with TestClient(create_app(components=parts), raise_server_exceptions=False) as client:
            yield client, auth(key, "author")
    finally:
        parts.close()


def living_turn(client: TestClient, headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """A living book with one entry written by its author, and the turn's selection."""
    book = client.post(
        "/v1/books", json={"title": "Coast", "settings": {"living_world": True}}, headers=headers
    ).json()
    entry = {"title": "Port Vel", "lore": PORT_VEL, "aliases": ["Vel"]}
    added = client.post(f"/v1/books/{book['id']}/entries", json=entry, headers=headers)
    assert added.status_code == 201, added.text
    turn = {
        "book_ids": [book["id"]],
        "messages": [{"role": "user", "content": SCENE}],
        "supports_tools": True,
        "chat_id": "chat-1",
    }
    selection = client.post("/v1/select", json=turn, headers=headers).json()
    assert selection["living_world"] == {"book_id": book["id"]}
    return book["id"], selection


def ask_with_tools(llm: LLM, selection: dict[str, Any], seed: int = 42) -> LLMResult:
    system = [LLMMessage("system", m["content"]) for m in selection["messages"]]
    rules = LLMMessage(
        "system",
        "You narrate a story. When the story establishes a lasting fact, record it with "
        "lore_create (a new topic) or lore_append (a topic that exists).",
    )
    request = LLMRequest(
        messages=(*system, rules, LLMMessage("user", SCENE)),
        tools=[t["function"] for t in selection["tools"]],
        max_output_tokens=160,
        temperature=0.7,
        seed=seed,
    )
    try:
        return llm.complete(request)
    except LLMTruncated as exc:  # a rambling reply cut at the limit calls no tool
        return LLMResult(text=exc.partial, finish_reason="length")


def bounded_create_schema(selection: dict[str, Any], *, minimums: bool) -> dict[str, Any]:
    """lore_create's parameters, with lengths bounded so a rambling model stops in time (as
    generate's schemas do; the limits are checked by the server either way), and with the
    DESIGN §6 minimums when asked."""
    tool = next(t["function"] for t in selection["tools"] if t["function"]["name"] == "lore_create")
    schema: dict[str, Any] = json.loads(json.dumps(tool["parameters"]))
    schema["properties"]["title"]["maxLength"] = 60
    schema["properties"]["lore"]["maxLength"] = 400
    schema["properties"]["aliases"]["maxItems"] = 3
    if minimums:
        schema["properties"]["title"]["minLength"] = 2
        schema["properties"]["lore"]["minLength"] = 40
    return schema


def forward(
    client: TestClient,
    headers: dict[str, str],
    book_id: str,
    call: LLMToolCall,
    message_id: str,
) -> Any:
    """The app's forwarding of one tool call, checked against the contract."""
    body = {
        "book_id": book_id,
        "chat_id": "chat-1",
        "message_id": message_id,
        "call_id": call.id or f"{message_id}-{call.name}",
        "tool": call.name,
        "arguments": call.arguments,
    }
    got = client.post("/v1/writes", json=body, headers=headers)
    assert got.status_code in (200, 201, 404, 409, 422), got.text
    if got.status_code >= 400:
        error = got.json()["error"]
        assert error["field"] and error["message"]  # a clear 4xx naming the field
        return got
    answer = got.json()
    assert answer["effect"] in ("created", "appended", "unchanged") and answer["result"]
    entry = client.get(f"/v1/entries/{answer['entry_id']}", headers=headers).json()
    assert entry["book_id"] == book_id and len(entry["lore"]) <= 20_000
    again = client.post("/v1/writes", json=body, headers=headers)
    assert again.status_code == 200 and again.json()["id"] == answer["id"]  # replay
    return got


def check_log_and_regenerate(
    client: TestClient, headers: dict[str, str], book_id: str, message_id: str, written: int
) -> None:
    log = client.get(f"/v1/books/{book_id}/writes", headers=headers).json()["writes"]
    assert len([w for w in log if w["message_id"] == message_id]) == written
    undone = client.delete(f"/v1/chats/chat-1/messages/{message_id}/writes", headers=headers)
    assert undone.status_code == 200
    assert len(undone.json()["undone"]) + len(undone.json()["kept"]) == written
    port_vel = client.get(f"/v1/books/{book_id}/entries", headers=headers).json()["entries"][0]
    assert port_vel["lore"] == PORT_VEL  # the author's text, as it was


@pytest.mark.llm_local
@pytest.mark.slow
def test_tool_loop_against_the_local_model(
    llm_server: LocalLLMServer, app_client: tuple[TestClient, dict[str, str]]
) -> None:
    client, headers = app_client
    book_id, selection = living_turn(client, headers)
    llm = OpenAICompatibleLLM(
        llm_server.base_url,
        api_key=llm_server.api_key,
        context_tokens=llm_server.context,
        max_output_tokens=512,
        timeout_s=300,
    )
    try:
        reply = ask_with_tools(llm, selection)
        calls = [c for c in reply.tool_calls if c.name in WRITE_TOOLS]
        answers = [forward(client, headers, book_id, c, "m-tools") for c in calls]
        written = sum(a.status_code == 201 for a in answers)
        check_log_and_regenerate(client, headers, book_id, "m-tools", written)

        # As the tool states it (SmolLM2 tends to write lore under the 20-character minimum:
        # a 422 naming arguments.lore), then with the minimums in the schema too.
        forced = [
            llm.complete(
                LLMRequest(
                    messages=(
                        LLMMessage("system", "Record one lasting fact of this scene as a topic."),
                        LLMMessage("user", SCENE),
                    ),
                    schema=bounded_create_schema(selection, minimums=minimums),
                    schema_name="lore_create",
                    max_output_tokens=200,
                    temperature=0.7,
                    seed=42,
                )
            )
            for minimums in (False, True)
        ]
    finally:
        llm.close()
    statuses = []
    for i, reply in enumerate(forced):
        assert isinstance(reply.data, dict), reply.text
        call = LLMToolCall(f"forced-{i}", "lore_create", json.dumps(reply.data))
        got = forward(client, headers, book_id, call, f"m-forced-{i}")
        statuses.append(got.status_code)
        written = int(got.status_code == 201)
        check_log_and_regenerate(client, headers, book_id, f"m-forced-{i}", written)
    assert statuses[1] == 201, statuses  # within the minimums, the write goes through


def test_tool_loop_with_scripted_calls(app_client: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = app_client
    book_id, selection = living_turn(client, headers)
    fact = "Its harbor master keeps a ledger of every drowned ship."
    scripted = ScriptedLLM(
        [
            LLMResult(
                text="",
                finish_reason="tool_calls",
                tool_calls=(
                    LLMToolCall(
                        "call_1",
                        "lore_create",
                        json.dumps(
                            {
                                "title": "The Drowned Rat",
                                "lore": "The Drowned Rat is a tavern of Port Vel, now owned "
                                "by Captain Mirela.",
                                "aliases": ["Drowned Rat"],
                            }
                        ),
                    ),
                    LLMToolCall(
                        "call_2", "lore_create", json.dumps({"title": "vel", "lore": fact})
                    ),
                    LLMToolCall(
                        "call_3", "lore_append", json.dumps({"title": "Port Vel", "text": fact})
                    ),
                    LLMToolCall(
                        "call_4", "lore_append", json.dumps({"title": "Nowhere", "text": "x"})
                    ),
                ),
            )
        ]
    )
    reply = ask_with_tools(scripted, selection)
    assert [t["name"] for t in scripted.requests[0].tools] == ["lookup_lore", *WRITE_TOOLS]
    answers = [forward(client, headers, book_id, c, "m1") for c in reply.tool_calls]
    assert [a.status_code for a in answers] == [201, 201, 201, 404]
    assert [a.json().get("effect") for a in answers[:3]] == ["created", "appended", "unchanged"]
    entries = client.get(f"/v1/books/{book_id}/entries", headers=headers).json()["entries"]
    assert [e["title"] for e in entries] == ["Port Vel", "The Drowned Rat"]
    assert entries[0]["lore"] == PORT_VEL + "\n\n" + fact  # appended, the author's text first
    check_log_and_regenerate(client, headers, book_id, "m1", 3)
    trash = client.get(f"/v1/books/{book_id}/entries/trash", headers=headers).json()["entries"]
    assert [e["title"] for e in trash] == ["The Drowned Rat"]
    restored = client.post(f"/v1/entries/{trash[0]['id']}/restore", headers=headers)
    assert restored.status_code == 200 and restored.json()["title"] == "The Drowned Rat"
