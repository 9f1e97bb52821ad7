"""Tool calls through the LLM port (the living world's loop): the selection's tools go out in
each protocol's own shape, and the model's calls come back as ``LLMToolCall`` (id, name,
arguments as JSON text) — recorded replies over ``httpx.MockTransport``."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.unit.test_llm_anthropic import message
from tests.unit.test_llm_openai import Recorder, client, completion
from worldbook.adapters.llm.anthropic import AnthropicLLM
from worldbook.core.living_tools import living_tools
from worldbook.core.rendering import lookup_tool
from worldbook.llm_port import LLMMessage, LLMRequest, LLMToolCall

TOOLS = [lookup_tool(), *living_tools()]
ASK = LLMRequest(
    messages=(LLMMessage("system", "Lore."), LLMMessage("user", "We reach Port Vel.")),
    tools=TOOLS,
)
ARGS = {"title": "Port Vel", "lore": "Port Vel is the pirate city of the north."}


def test_openai_sends_function_tools_and_reads_tool_calls() -> None:
    call = {
        "id": "call_abc",
        "type": "function",
        "function": {"name": "lore_create", "arguments": json.dumps(ARGS)},
    }
    junk = {"id": "call_x", "type": "function", "function": {"arguments": "{}"}}  # no name
    recorder = Recorder(
        httpx.Response(200, json=completion(None, "tool_calls", tool_calls=[call, junk]))
    )
    llm, _ = client(recorder)
    result = llm.complete(ASK)
    assert recorder.bodies[0]["tools"] == [{"type": "function", "function": t} for t in TOOLS]
    assert "response_format" not in recorder.bodies[0]
    assert result.tool_calls == (LLMToolCall("call_abc", "lore_create", json.dumps(ARGS)),)
    assert result.text == "" and result.finish_reason == "tool_calls"


def test_openai_without_tools_sends_none_and_reads_none() -> None:
    recorder = Recorder(httpx.Response(200, json=completion("Hello.")))
    llm, _ = client(recorder)
    result = llm.complete(LLMRequest(messages=ASK.messages))
    assert "tools" not in recorder.bodies[0] and result.tool_calls == ()


def test_anthropic_sends_input_schemas_and_reads_tool_use_blocks() -> None:
    bodies: list[dict[str, Any]] = []
    reply = message(
        {"type": "text", "text": "I will record it."},
        {"type": "tool_use", "id": "toolu_01", "name": "lore_create", "input": ARGS},
    )

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=reply)

    llm = AnthropicLLM(api_key="k", model="claude", transport=httpx.MockTransport(handler))
    try:
        result = llm.complete(ASK)
    finally:
        llm.close()
    assert bodies[0]["tools"] == [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in TOOLS
    ]
    assert "tool_choice" not in bodies[0]
    assert result.tool_calls == (
        LLMToolCall("toolu_01", "lore_create", json.dumps(ARGS, ensure_ascii=False)),
    )
    assert result.text == "I will record it." and result.data is None
