"""The proxy (ADR 0017) driven by the official ``openai`` and ``anthropic`` SDKs against a
*scripted* upstream (``tests/scripted_upstream.py``: a real loopback HTTP server speaking both
protocols, replies queued by each test). What reached the upstream — the lore, its place, the
app's own fields — and what the SDK got are both checked."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.api.conftest import PROXY_LORE as LORE
from tests.api.conftest import Proxy
from tests.scripted_upstream import (
    Reply,
    anthropic_answer,
    anthropic_events,
    openai_answer,
    openai_call,
    openai_chunks,
)
from tests.served import TIMEOUT
from worldbook.core.rendering import STABLE_HEADER, TURN_HEADER


def system_texts(seen: dict[str, Any]) -> list[str]:
    return [m["content"] for m in seen["messages"] if m["role"] == "system"]


def test_openai_sdk_non_streaming(proxy: Proxy) -> None:
    conn = proxy.connect()
    proxy.upstream.queue(Reply(body=openai_answer("The towers stand.")))
    client = openai.OpenAI(base_url=proxy.url + conn["base_url_path"], api_key=conn["token"])
    raw = client.chat.completions.with_raw_response.create(
        model="any-model",
        messages=[
            {"role": "system", "content": "You are the narrator."},
            {"role": "user", "content": "Tell me about Saltreach."},
        ],
        temperature=0.3,
        seed=7,
        extra_body={"vendor_extra": {"x": 1}},
    )
    answer = raw.parse()
    assert answer.choices[0].message.content == "The towers stand."
    assert answer.usage is not None and answer.usage.total_tokens == 12
    seen = proxy.upstream.seen[-1]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer sk-upstream-secret"
    body = seen.body
    assert (body["model"], body["temperature"], body["seed"]) == ("any-model", 0.3, 7)
    assert body["vendor_extra"] == {"x": 1}
    assert body["messages"][0] == {"role": "system", "content": "You are the narrator."}
    assert body["messages"][1]["content"].startswith(STABLE_HEADER)  # lore after the app's
    assert LORE in body["messages"][1]["content"]
    assert body["messages"][-1] == {"role": "user", "content": "Tell me about Saltreach."}
    assert "tools" not in body  # the app sent none: the world index only
    trace = json.loads(raw.headers["x-worldbook-trace"])
    assert trace["canon"] == 1 and trace["given_up"] == []
    log = httpx.get(
        f"{proxy.url}/v1/chats/{trace['chat']}/log", headers=proxy.headers, timeout=TIMEOUT
    )
    assert log.status_code == 200 and len(log.json()["turns"]) == 1  # the /v1/select path


def test_openai_sdk_streaming_with_usage(proxy: Proxy) -> None:
    conn = proxy.connect()
    proxy.upstream.queue(openai_chunks(["The ", "towers ", "stand."]))
    client = openai.OpenAI(base_url=proxy.url + conn["base_url_path"], api_key=conn["token"])
    stream = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Saltreach?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The towers stand."
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 13
    finish = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finish[-1] == "stop"
    assert proxy.upstream.seen[-1].body["stream_options"] == {"include_usage": True}


def test_anthropic_sdk_system_string_and_blocks(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic")
    assert conn["base_url_path"] == "/anthropic/v1"
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    for system in ("Be terse.", [{"type": "text", "text": "Be terse."}]):
        proxy.upstream.queue(Reply(body=anthropic_answer("Salt.")))
        answer = client.messages.create(
            model="claude-x",
            max_tokens=200,
            system=system,  # type: ignore[arg-type]
            messages=[{"role": "user", "content": "Saltreach?"}],
            extra_body={"top_k": 5, "temperature": 0.5},
        )
        assert answer.content[0].type == "text" and answer.content[0].text == "Salt."
        seen = proxy.upstream.seen[-1]
        assert seen.path == "/v1/messages" and seen.headers["x-api-key"] == "sk-upstream-secret"
        blocks = seen.body["system"]
        assert blocks[0] == {"type": "text", "text": "Be terse."}
        assert blocks[1]["text"].startswith(STABLE_HEADER)
        assert blocks[1]["cache_control"] == {"type": "ephemeral"}
        assert (seen.body["max_tokens"], seen.body["top_k"], seen.body["temperature"]) == (
            200,
            5,
            0.5,
        )


def test_anthropic_sdk_streaming(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic")
    proxy.upstream.queue(anthropic_events("Salt and stone."))
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    with client.messages.stream(
        model="c", max_tokens=100, messages=[{"role": "user", "content": "Saltreach?"}]
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Salt and stone."
    assert final.stop_reason == "end_turn" and final.usage.output_tokens == 3


def test_tool_loop_openai_lookup_answered_server_side(proxy: Proxy) -> None:
    conn = proxy.connect(supports_tools=True)
    lookup = openai_call("call_1", "lookup_lore", {"title": "Vessa"})
    app_tool: Any = {"type": "function", "function": {"name": "roll_dice", "parameters": {}}}
    proxy.upstream.queue(
        Reply(body=openai_answer(None, [lookup])), Reply(body=openai_answer("Vessa waits."))
    )
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    answer = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "Who keeps it?"}], tools=[app_tool]
    )
    assert answer.choices[0].message.content == "Vessa waits."
    assert answer.choices[0].message.tool_calls is None  # worldbook's call never shows
    assert answer.usage is not None and answer.usage.total_tokens == 24  # both rounds
    first, second = (s.body for s in proxy.upstream.seen[-2:])
    names = [t["function"]["name"] for t in first["tools"]]
    assert names[0] == "roll_dice" and "lookup_lore" in names  # the app's tools first
    result = second["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_1"
    assert "never leaves it" in result["content"]


def test_tool_loop_app_tools_pass_to_the_app(proxy: Proxy) -> None:
    conn = proxy.connect()
    dice = openai_call("call_9", "roll_dice", {"sides": 6})
    proxy.upstream.queue(Reply(body=openai_answer(None, [dice])))
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    answer = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Roll."}],
        tools=[{"type": "function", "function": {"name": "roll_dice", "parameters": {}}}],
    )
    calls = answer.choices[0].message.tool_calls
    assert calls is not None and calls[0].id == "call_9"
    assert answer.choices[0].finish_reason == "tool_calls"


def test_tool_loop_streaming_openai_holds_worldbook_calls(proxy: Proxy) -> None:
    conn = proxy.connect(supports_tools=True)
    arguments = json.dumps({"title": "Vessa"})
    function = {"name": "lookup_lore", "arguments": arguments}
    call: dict[str, Any] = {"id": "c1", "type": "function", "function": function}
    proxy.upstream.queue(openai_chunks(["Let me see. "], call), openai_chunks(["Vessa."]))
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    chunks = list(
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "Who?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "Let me see. Vessa."
    )
    assert not any(c.choices and c.choices[0].delta.tool_calls for c in chunks)
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 26
    assert proxy.upstream.seen[-1].body["messages"][-1]["role"] == "tool"


def test_tool_loop_anthropic_streaming(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic", supports_tools=True)
    proxy.upstream.queue(
        anthropic_events("Checking. ", ("tu_1", "lookup_lore", {"title": "Vessa"})),
        anthropic_events("Vessa keeps it."),
    )
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    with client.messages.stream(
        model="c", max_tokens=100, messages=[{"role": "user", "content": "Who?"}]
    ) as stream:
        final = stream.get_final_message()
    assert [b.type for b in final.content] == ["text", "text"]
    assert final.stop_reason == "end_turn"
    second = proxy.upstream.seen[-1].body["messages"]
    assert second[-2]["content"][1]["input"] == {"title": "Vessa"}
    assert second[-1]["content"][0]["tool_use_id"] == "tu_1"


def test_tool_loop_anthropic_non_streaming(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic", supports_tools=True)
    proxy.upstream.queue(
        Reply(body=anthropic_answer("", ("tu_1", "lookup_lore", {"title": "Vessa"}))),
        Reply(body=anthropic_answer("Vessa.")),
    )
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    answer = client.messages.create(
        model="c", max_tokens=100, messages=[{"role": "user", "content": "Who?"}]
    )
    assert answer.stop_reason == "end_turn" and answer.usage.input_tokens == 20
    assert [b.type for b in answer.content] == ["text"]
    tools = proxy.upstream.seen[-2].body["tools"]
    assert tools[0]["name"] == "lookup_lore" and "input_schema" in tools[0]


def test_upstream_errors_pass_through_and_down_is_502(proxy: Proxy) -> None:
    conn = proxy.connect()
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"], max_retries=0)
    bad = {"error": {"message": "model not found", "type": "invalid_request_error"}}
    proxy.upstream.queue(Reply(404, bad))
    with pytest.raises(openai.NotFoundError, match="model not found"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    proxy.upstream.stop()
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    assert caught.value.status_code == 502 and "could not be reached" in caught.value.message


def test_worldbook_errors_in_each_protocols_shape(proxy: Proxy) -> None:
    conn = proxy.connect()
    gpt = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key="wbc_nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError, match="unknown or revoked"):
        gpt.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    claude = anthropic.Anthropic(
        base_url=proxy.url + "/anthropic", api_key=conn["token"], max_retries=0
    )
    with pytest.raises(anthropic.UnprocessableEntityError, match="speaks openai"):
        claude.messages.create(
            model="c", max_tokens=5, messages=[{"role": "user", "content": "Hi"}]
        )
    empty = httpx.post(
        f"{proxy.url}/anthropic/v1/messages",
        json={"model": "c", "messages": []},
        headers={"x-api-key": conn["token"]},
        timeout=TIMEOUT,
    )
    assert empty.status_code == 401 or empty.json()["type"] == "error"
    assert proxy.upstream.seen == []  # nothing went upstream


def test_budget_leaves_the_apps_prompt_room(proxy: Proxy) -> None:
    conn = proxy.connect(input_window=600)
    proxy.upstream.queue(Reply(body=openai_answer("ok")))
    long = "word " * 500  # ~500 tokens of the app's own: no room for lore in 600
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    raw = client.chat.completions.with_raw_response.create(
        model="m", max_tokens=50, messages=[{"role": "user", "content": long + "Saltreach?"}]
    )
    trace = json.loads(raw.headers["x-worldbook-trace"])
    assert "all_lore" in trace["given_up"] or trace["lore_tokens"] <= trace["room"]
    sent = proxy.upstream.seen[-1].body["messages"]
    assert not any(TURN_HEADER in str(m["content"]) for m in sent if trace["given_up"])
    assert trace["room"] < 100


def test_chat_header_and_derived_key(proxy: Proxy) -> None:
    conn = proxy.connect()
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    keys = []
    for history in (["Hi"], ["Hi", "More"]):
        proxy.upstream.queue(Reply(body=openai_answer("ok")))
        messages: list[Any] = []
        for text in history:
            messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "a"}]
        raw = client.chat.completions.with_raw_response.create(model="m", messages=messages[:-1])
        keys.append(raw.headers["x-worldbook-chat"])
    assert keys[0] == keys[1] and keys[0].startswith("proxy-")  # one chat as it grows
    proxy.upstream.queue(Reply(body=openai_answer("ok")))
    raw = client.chat.completions.with_raw_response.create(
        model="m",
        messages=[{"role": "user", "content": "Hi"}],
        extra_headers={"X-Worldbook-Chat": "chat-42"},
    )
    assert raw.headers["x-worldbook-chat"] == "chat-42"


def test_models_lists_the_fixed_model(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_model="smol-fixed")
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"])
    assert [m.id for m in client.models.list()] == ["smol-fixed"]
    proxy.upstream.queue(Reply(body=openai_answer("ok")))
    client.chat.completions.create(model="other", messages=[{"role": "user", "content": "x"}])
    assert proxy.upstream.seen[-1].body["model"] == "smol-fixed"


def test_anthropic_models_lists_the_fixed_model_in_anthropics_shape(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic", upstream_model="claude-fixed")
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    assert [m.id for m in client.models.list()] == ["claude-fixed"]
    listed = httpx.get(
        proxy.url + "/anthropic/v1/models", headers={"x-api-key": conn["token"]}, timeout=TIMEOUT
    ).json()
    assert set(listed) == {"data", "has_more", "first_id", "last_id"}
    assert (listed["has_more"], listed["first_id"], listed["last_id"]) == (
        False,
        "claude-fixed",
        "claude-fixed",
    )
    (model,) = listed["data"]
    assert model["type"] == "model" and model["display_name"] == "claude-fixed"
    assert model["created_at"].endswith("Z")  # RFC 3339, as Anthropic's API sends it
    assert proxy.upstream.seen == []  # nothing asked upstream


def test_anthropic_models_pass_the_upstreams_pages_through(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic")
    page = {
        "data": [
            {
                "type": "model",
                "id": "c-2",
                "display_name": "C 2",
                "created_at": "2025-01-01T00:00:00Z",
            }
        ],
        "has_more": False,
        "first_id": "c-2",
        "last_id": "c-2",
    }
    proxy.upstream.models = Reply(body=page)
    client = anthropic.Anthropic(base_url=proxy.url + "/anthropic", api_key=conn["token"])
    listed = client.models.list(limit=1, after_id="c-1")
    assert [m.id for m in listed.data] == ["c-2"]
    seen = proxy.upstream.seen[-1]
    assert seen.path.startswith("/v1/models?") and "after_id=c-1" in seen.path
    assert "limit=1" in seen.path and seen.headers["x-api-key"] == "sk-upstream-secret"
    gpt = proxy.connect()  # an OpenAI connection asked at the Anthropic base URL
    wrong = anthropic.Anthropic(
        base_url=proxy.url + "/anthropic", api_key=gpt["token"], max_retries=0
    )
    with pytest.raises(anthropic.UnprocessableEntityError, match="speaks openai"):
        wrong.models.list()
