"""A native Anthropic Messages API client over plain httpx (docs/ai-authoring.md §2, §4).

Anthropic's OpenAI-compatibility endpoint ignores ``response_format``, so JSON is obtained the
native way: one tool whose ``input_schema`` is the requested schema, forced with
``tool_choice: {"type": "tool", "name": …}``; the reply's ``tool_use`` block carries the object
in ``input``. System messages travel in the top-level ``system`` field. ``stop_reason:
"max_tokens"`` raises :class:`LLMTruncated`; overloaded (529) and 5xx are ``LLMUnavailable``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Unpack

from worldbook.adapters.llm._http import HttpLLM, HttpOptions, reply_usage, truncated
from worldbook.core.json_reply import find_json_object
from worldbook.errors import LanguageModelError
from worldbook.llm_port import LLMRequest, LLMResult, LLMToolCall

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_URL = "https://api.anthropic.com"


class AnthropicLLM(HttpLLM):
    """An ``LLM`` over Anthropic's Messages API.

    Args:
        base_url: ``https://api.anthropic.com`` (``/v1`` and ``/v1/messages`` are accepted too).
        api_key: sent as ``x-api-key``.
        model: required by the API (``claude-…``).
        http: timeouts, retries, transport (:class:`~worldbook.adapters.llm._http.HttpOptions`).
    """

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        *,
        api_key: str | None,
        model: str,
        context_tokens: int = 200_000,
        max_output_tokens: int = 4096,
        **http: Unpack[HttpOptions],
    ) -> None:
        base = base_url.rstrip("/")
        if base.endswith("/v1/messages"):
            url = base
        elif base.endswith("/v1"):
            url = base + "/messages"
        else:
            url = base + "/v1/messages"
        self._model = model
        sent = {"anthropic-version": ANTHROPIC_VERSION, "Accept": "application/json"}
        if api_key:
            sent["x-api-key"] = api_key
        super().__init__(
            url, sent, context_tokens=context_tokens, max_output_tokens=max_output_tokens, http=http
        )

    @property
    def model(self) -> str:
        return self._model

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        turns = [
            {"role": m.role, "content": m.content} for m in request.messages if m.role != "system"
        ]
        body: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_output_tokens,
            "messages": turns,
        }
        if system:
            body["system"] = system
        if request.temperature is not None:
            body["temperature"] = min(request.temperature, 1.0)  # Anthropic's range is 0–1
        if request.schema is not None:
            body["tools"] = [
                {
                    "name": request.schema_name,
                    "description": "Give the answer as this tool's input.",
                    "input_schema": dict(request.schema),
                }
            ]
            body["tool_choice"] = {"type": "tool", "name": request.schema_name}
        elif request.tools:
            body["tools"] = [
                {
                    "name": t["name"],
                    "description": t["description"],
                    "input_schema": t["parameters"],
                }
                for t in request.tools
            ]
        return body

    def complete(self, request: LLMRequest) -> LLMResult:
        body, latency_ms = self._channel.post(self._body(request), timeout_s=request.timeout_s)
        return self._result(body, request, latency_ms)

    def _result(self, body: dict[str, Any], request: LLMRequest, latency_ms: float) -> LLMResult:
        blocks = body.get("content")
        if not isinstance(blocks, list):
            raise LanguageModelError("The Anthropic API sent a message with no content.")
        data: Any = None
        texts: list[str] = []
        calls: list[LLMToolCall] = []
        for block in blocks:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
                if request.schema is None:  # the model called one of the request's tools
                    arguments = json.dumps(block["input"], ensure_ascii=False)
                    calls.append(
                        LLMToolCall(str(block.get("id") or ""), str(block.get("name")), arguments)
                    )
                    continue
                data = block["input"]
                texts.append(json.dumps(data, ensure_ascii=False))
            elif block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        text = "".join(texts)
        stop = str(body.get("stop_reason") or "end_turn")
        if stop == "max_tokens":
            raise truncated(request.max_output_tokens, text)
        if data is None and request.schema is not None:
            data = find_json_object(text)
        return LLMResult(
            text=text,
            data=data,
            finish_reason=stop,
            usage=reply_usage(body, "input_tokens", "output_tokens"),
            model=str(body.get("model") or self._model),
            latency_ms=latency_ms,
            json_mode="tool" if request.schema is not None else "none",
            tool_calls=tuple(calls),
        )
