"""The OpenAI-compatible adapter against recorded replies (httpx.MockTransport): JSON-mode
fallbacks, every error path, retries honouring Retry-After, truncation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.llm_fakes import lore_request
from worldbook import errors
from worldbook.adapters.llm import build_llm, provider_of
from worldbook.adapters.llm.anthropic import AnthropicLLM
from worldbook.adapters.llm.openai_compat import OpenAICompatibleLLM, portable_schema
from worldbook.llm_port import LLM, LLMMessage, LLMRequest
from worldbook.settings import WorldbookSettings

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 60},
        "pattern": {"type": "array", "items": {"type": "string", "minLength": 2}, "maxItems": 3},
    },
    "required": ["title", "pattern"],
    "additionalProperties": False,
}
REQUEST = lore_request(SCHEMA, max_output_tokens=200, seed=7)


def completion(content: str | None, finish: str = "stop", **message: Any) -> dict[str, Any]:
    """A chat.completion body shaped like OpenAI's and llama.cpp's."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "smollm2",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 31, "completion_tokens": 12, "total_tokens": 43},
    }


def error(status: int, message: str, kind: str, **extra: Any) -> httpx.Response:
    return httpx.Response(status, json={"error": {"message": message, "type": kind, **extra}})


Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    def __init__(self, *responses: httpx.Response | Handler | Exception) -> None:
        self.responses = list(responses)
        self.bodies: list[dict[str, Any]] = []
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.bodies.append(json.loads(request.content))
        reply = self.responses.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply(request) if callable(reply) else reply


def client(recorder: Recorder, **kwargs: Any) -> tuple[OpenAICompatibleLLM, list[float]]:
    waits: list[float] = []
    llm = OpenAICompatibleLLM(
        "http://127.0.0.1:9/v1/",
        api_key="sk-secret",
        model="smollm2",
        transport=httpx.MockTransport(recorder),
        sleep=waits.append,
        **kwargs,
    )
    return llm, waits


def test_json_schema_request_and_parsed_reply() -> None:
    rec = Recorder(httpx.Response(200, json=completion('{"title": "Vel", "pattern": []}')))
    llm, _ = client(rec)
    result = llm.complete(REQUEST)
    assert isinstance(llm, LLM)
    assert result.data == {"title": "Vel", "pattern": []}
    assert (result.usage.input_tokens, result.usage.output_tokens) == (31, 12)
    assert result.json_mode == "json_schema"
    sent = rec.bodies[0]
    assert str(rec.requests[0].url) == "http://127.0.0.1:9/v1/chat/completions"
    assert rec.requests[0].headers["authorization"] == "Bearer sk-secret"
    assert sent["response_format"]["json_schema"] == {
        "name": "entry",
        "strict": True,
        "schema": SCHEMA,
    }
    assert (sent["model"], sent["seed"], sent["max_tokens"], sent["stream"]) == (
        "smollm2",
        7,
        200,
        False,
    )


def test_free_text_requests_send_no_format() -> None:
    rec = Recorder(httpx.Response(200, json=completion("Hello")))
    llm, _ = client(rec)
    result = llm.complete(LLMRequest(messages=(LLMMessage("user", "hi"),)))
    assert (result.text, result.data) == ("Hello", None)
    assert "response_format" not in rec.bodies[0]


def test_refused_formats_step_down_once_and_are_remembered() -> None:
    refusal = error(
        400,
        "Invalid schema for response_format 'entry': 'maxLength' is not permitted.",
        "invalid_request_error",
        param="response_format",
    )
    json_object_refused = error(
        400, "response_format json_object is not supported", "invalid_request_error"
    )
    rec = Recorder(
        refusal,
        error(400, "Invalid schema for response_format: still refused", "invalid_request_error"),
        json_object_refused,
        httpx.Response(200, json=completion('Sure: ```json\n{"title": "Vel", "pattern": []}\n```')),
        httpx.Response(200, json=completion('{"title": "Port", "pattern": []}')),
    )
    llm, _ = client(rec)
    assert llm.complete(REQUEST).data == {"title": "Vel", "pattern": []}
    formats = [b.get("response_format", {}).get("type") for b in rec.bodies]
    assert formats == ["json_schema", "json_schema", "json_object", None]
    portable = rec.bodies[1]["response_format"]["json_schema"]["schema"]
    assert portable == portable_schema(SCHEMA)
    assert "maxLength" not in json.dumps(portable) and "pattern" in portable["properties"]
    assert "JSON Schema" in rec.bodies[3]["messages"][0]["content"]  # prompt-only mode
    assert llm.json_mode == "prompt"
    assert llm.complete(REQUEST).json_mode == "prompt"  # no new refusals paid for
    assert len(rec.bodies) == 5


def test_a_reply_that_is_not_json_has_no_data() -> None:
    rec = Recorder(httpx.Response(200, json=completion("I cannot do that.")))
    llm, _ = client(rec)
    assert llm.complete(REQUEST).data is None


def test_a_refusal_field_is_the_text() -> None:
    rec = Recorder(httpx.Response(200, json=completion(None, refusal="I can't help with that.")))
    llm, _ = client(rec)
    assert llm.complete(REQUEST).text == "I can't help with that."


def test_finish_reason_length_is_truncated_with_the_partial_text() -> None:
    rec = Recorder(httpx.Response(200, json=completion('{"title": "Ve', finish="length")))
    llm, _ = client(rec)
    with pytest.raises(errors.LLMTruncated) as cut:
        llm.complete(REQUEST)
    assert cut.value.partial == '{"title": "Ve'


@pytest.mark.parametrize("status", [401, 403])
def test_auth_failures_name_the_setting_and_never_the_key(status: int) -> None:
    rec = Recorder(error(status, "Invalid API Key", "authentication_error"))
    llm, waits = client(rec)
    with pytest.raises(errors.LLMAuthFailed) as failed:
        llm.complete(REQUEST)
    assert "WORLDBOOK_LLM_API_KEY" in failed.value.message
    assert "sk-secret" not in failed.value.message
    assert waits == [] and len(rec.bodies) == 1  # never retried


def test_rate_limits_are_retried_after_the_hinted_wait() -> None:
    limited = httpx.Response(
        429, headers={"Retry-After": "2"}, json={"error": {"message": "slow down"}}
    )
    ok = httpx.Response(200, json=completion('{"title": "Vel", "pattern": []}'))
    llm, waits = client(Recorder(limited, ok))
    assert llm.complete(REQUEST).data is not None
    assert waits == [2.0]


def test_a_long_retry_after_is_passed_on_not_waited() -> None:
    limited = httpx.Response(
        429, headers={"Retry-After": "60"}, json={"error": {"message": "slow down"}}
    )
    llm, waits = client(Recorder(limited))
    with pytest.raises(errors.LLMRateLimited) as failed:
        llm.complete(REQUEST)
    assert failed.value.retry_after == 60.0
    assert waits == []


def test_server_errors_are_retried_then_reported_unavailable() -> None:
    rec = Recorder(*[error(500, "boom", "server_error") for _ in range(3)])
    llm, waits = client(rec, max_retries=2)
    with pytest.raises(errors.LLMUnavailable, match="HTTP 500"):
        llm.complete(REQUEST)
    assert waits == [0.5, 1.0]
    assert len(rec.bodies) == 3


def test_context_overflow_from_llama_cpp_and_openai() -> None:
    llama = error(
        400,
        "request (3031 tokens) exceeds the available context size (2048 tokens)",
        "exceed_context_size_error",
        n_prompt_tokens=3031,
    )
    openai = error(
        400,
        "This model's maximum context length is 8192 tokens.",
        "invalid_request_error",
        code="context_length_exceeded",
    )
    for reply in (llama, openai):
        llm, _ = client(Recorder(reply))
        with pytest.raises(errors.LLMContextTooLong, match="context window"):
            llm.complete(REQUEST)


def test_timeouts_and_unreachable_servers() -> None:
    llm, _ = client(Recorder(httpx.ReadTimeout("slow")), timeout_s=3)
    with pytest.raises(errors.LLMTimeout, match="3 s"):
        llm.complete(REQUEST)
    llm, _ = client(Recorder(httpx.ConnectError("refused")))
    with pytest.raises(errors.LLMUnavailable, match="WORLDBOOK_LLM_URL"):
        llm.complete(REQUEST)


def test_other_client_errors_and_junk_bodies_are_model_errors() -> None:
    llm, _ = client(Recorder(error(404, "model 'x' not found", "not_found_error")))
    with pytest.raises(errors.LanguageModelError, match="WORLDBOOK_LLM_MODEL"):
        llm.complete(REQUEST)
    llm, _ = client(Recorder(httpx.Response(200, text="<html>proxy</html>")))
    with pytest.raises(errors.LanguageModelError, match="not JSON"):
        llm.complete(REQUEST)
    llm, _ = client(Recorder(httpx.Response(200, json={"choices": []})))
    with pytest.raises(errors.LanguageModelError, match="no choices"):
        llm.complete(REQUEST)


def test_settings_choose_the_adapter() -> None:
    assert build_llm(WorldbookSettings()) is None
    local = build_llm(WorldbookSettings(llm_url="http://127.0.0.1:8080/v1"))
    assert isinstance(local, OpenAICompatibleLLM)
    claude = WorldbookSettings(
        llm_url="https://api.anthropic.com", llm_model="claude-x", llm_api_key="k"
    )
    assert provider_of(claude) == "anthropic"
    assert isinstance(build_llm(claude), AnthropicLLM)
    forced = WorldbookSettings(
        llm_url="https://proxy.example/v1", llm_provider="anthropic", llm_model="m"
    )
    assert isinstance(build_llm(forced), AnthropicLLM)
    assert build_llm(WorldbookSettings(llm_url="  ")) is None
