"""The Anthropic Messages adapter against recorded bodies shaped like the public API docs:
forced tool use for JSON, system prompt, max_tokens truncation, and the error table."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.llm_fakes import lore_request
from worldbook.adapters.llm.anthropic import AnthropicLLM
from worldbook.errors import (
    LLMAuthFailed,
    LLMContextTooLong,
    LLMRateLimited,
    LLMTruncated,
    LLMUnavailable,
)

SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
REQUEST = lore_request(SCHEMA, max_output_tokens=300, temperature=1.4)


def message(*content: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(content),
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 412, "output_tokens": 57},
    }


def api_error(status: int, kind: str, text: str, **headers: str) -> httpx.Response:
    body = {"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_011"}
    return httpx.Response(status, json=body, headers=headers)


def adapter(
    *responses: httpx.Response,
) -> tuple[AnthropicLLM, list[dict[str, Any]], list[httpx.Request]]:
    queue = list(responses)
    bodies: list[dict[str, Any]] = []
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        bodies.append(json.loads(request.content))
        return queue.pop(0)

    llm = AnthropicLLM(
        "https://api.anthropic.com",
        api_key="sk-ant-secret",
        model="claude-sonnet-4-5",
        transport=httpx.MockTransport(handle),
        sleep=lambda _: None,
        max_retries=0,
    )
    return llm, bodies, seen


def test_json_comes_from_a_forced_tool_call() -> None:
    tool_use = {
        "type": "tool_use",
        "id": "toolu_01A09q90qw90lq917835lq9",
        "name": "entry",
        "input": {"title": "Vel"},
    }
    llm, bodies, seen = adapter(httpx.Response(200, json=message(tool_use)))
    result = llm.complete(REQUEST)
    assert result.data == {"title": "Vel"} and result.json_mode == "tool"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (412, 57)
    sent = bodies[0]
    assert str(seen[0].url) == "https://api.anthropic.com/v1/messages"
    assert seen[0].headers["x-api-key"] == "sk-ant-secret"
    assert seen[0].headers["anthropic-version"] == "2023-06-01"
    assert sent["system"] == "You write lore."
    assert sent["messages"] == [{"role": "user", "content": "One entry."}]
    assert sent["tools"][0]["input_schema"] == SCHEMA
    assert sent["tool_choice"] == {"type": "tool", "name": "entry"}
    assert sent["temperature"] == 1.0  # Anthropic's range is 0–1


def test_text_replies_are_searched_for_json() -> None:
    text = {"type": "text", "text": 'Here you go: {"title": "Vel"}'}
    llm, _, _ = adapter(httpx.Response(200, json=message(text, stop="end_turn")))
    assert llm.complete(REQUEST).data == {"title": "Vel"}


def test_max_tokens_is_truncation() -> None:
    text = {"type": "text", "text": '{"title": "Ve'}
    llm, _, _ = adapter(httpx.Response(200, json=message(text, stop="max_tokens")))
    with pytest.raises(LLMTruncated) as cut:
        llm.complete(REQUEST)
    assert cut.value.partial == '{"title": "Ve'


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (api_error(401, "authentication_error", "invalid x-api-key"), LLMAuthFailed),
        (api_error(403, "permission_error", "no access to this model"), LLMAuthFailed),
        (
            api_error(
                429,
                "rate_limit_error",
                "Number of requests has exceeded your rate limit",
                **{"retry-after": "30"},
            ),
            LLMRateLimited,
        ),
        (
            api_error(
                400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
            ),
            LLMContextTooLong,
        ),
        (
            api_error(
                413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
            ),
            LLMContextTooLong,
        ),
        (
            api_error(
                500,
                "api_error",
                "An unexpected error has occurred internal to Anthropic's systems.",
            ),
            LLMUnavailable,
        ),
        (api_error(529, "overloaded_error", "Overloaded"), LLMUnavailable),
    ],
)
def test_the_documented_error_table(response: httpx.Response, expected: type[Exception]) -> None:
    llm, _, _ = adapter(response)
    with pytest.raises(expected) as failed:
        llm.complete(REQUEST)
    assert "sk-ant-secret" not in str(failed.value)
    if expected is LLMRateLimited:
        assert failed.value.retry_after == 30.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "url", ["https://api.anthropic.com/v1", "https://api.anthropic.com/v1/messages/"]
)
def test_base_urls_with_the_version_or_the_path(url: str) -> None:
    assert AnthropicLLM(url, api_key=None, model="m").url == "https://api.anthropic.com/v1/messages"
