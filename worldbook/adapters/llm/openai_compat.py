"""An OpenAI-compatible chat-completions client over plain httpx (docs/ai-authoring.md §2, §4).

One non-streaming ``POST {base_url}/chat/completions`` per call. It serves OpenAI and every
server that speaks its protocol (llama.cpp / xllamacpp, vLLM, Ollama, LM Studio, LiteLLM
proxies, OpenRouter…).

JSON replies are asked for in the strongest way the server accepts, stepping down only when it
refuses a way with a 4xx that names the response format or schema:

1. ``response_format: {"type": "json_schema", "strict": true}`` with the schema as given;
2. the same with the length/count/range keywords removed — the portable subset that strict
   providers accept;
3. ``{"type": "json_object"}`` with the schema in the system prompt;
4. the schema in the system prompt alone; JSON is then found in the prose.

The step reached is remembered per adapter, so a server pays for a refusal once.
``finish_reason: "length"`` raises :class:`LLMTruncated` with the partial text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any, Unpack

import httpx

from worldbook.adapters.llm._http import (
    ErrorDetail,
    HttpLLM,
    HttpOptions,
    is_context_overflow,
    reply_usage,
    truncated,
)
from worldbook.core.json_reply import find_json_object
from worldbook.errors import LanguageModelError
from worldbook.llm_port import (
    JsonMode,
    LLMMessage,
    LLMRequest,
    LLMResult,
    LLMToolCall,
)

JSON_MODES: tuple[JsonMode, ...] = ("json_schema", "json_schema_portable", "json_object", "prompt")
_FORMAT_MARKERS = ("response_format", "json_schema", "json_object", "schema", "grammar")
# JSON Schema keywords that strict structured-output providers refuse (sizes and ranges).
_NON_PORTABLE = frozenset(
    {
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "uniqueItems",
        "default",
        "title",
    }
)
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


class _FormatRefused(Exception):
    """Internal (never leaves the adapter): the server refused this way of asking for JSON."""


def portable_schema(schema: Any) -> Any:
    """``schema`` without :data:`_NON_PORTABLE` keywords, walking only real subschemas (so a
    property *named* ``pattern`` survives)."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NON_PORTABLE:
            continue
        if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            out[key] = {name: portable_schema(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [portable_schema(sub) for sub in value]
        elif key in ("items", "additionalProperties", "not"):
            out[key] = portable_schema(value)
        else:
            out[key] = value
    return out


def schema_instruction(schema: Mapping[str, Any]) -> str:
    return (
        "Reply with one JSON object and nothing else (no code fence, no comments). "
        "It must follow this JSON Schema:\n" + json.dumps(schema, ensure_ascii=False)
    )


def with_instruction(messages: list[LLMMessage], instruction: str) -> list[LLMMessage]:
    """The messages with ``instruction`` appended to the first system message (or one added)."""
    if messages and messages[0].role == "system":
        first = LLMMessage("system", messages[0].content + "\n\n" + instruction)
        return [first, *messages[1:]]
    return [LLMMessage("system", instruction), *messages]


class OpenAICompatibleLLM(HttpLLM):
    """An ``LLM`` over an OpenAI-compatible server.

    Args:
        base_url: the URL OpenAI clients take, usually ending in ``/v1``; a URL that already
            ends in ``/chat/completions`` is used as is.
        api_key: sent as ``Authorization: Bearer``; None sends none (local servers).
        model: the ``model`` field; None leaves it out (llama.cpp serves its one model).
        http: timeouts, retries, ``transport`` (tests pass ``httpx.MockTransport``) and
            ``sleep`` (tests pass a recorder): :class:`~worldbook.adapters.llm._http.HttpOptions`.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        model: str | None = None,
        context_tokens: int = 8192,
        max_output_tokens: int = 4096,
        headers: Mapping[str, str] | None = None,
        **http: Unpack[HttpOptions],
    ) -> None:
        base = base_url.rstrip("/")
        url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        self._model = model
        sent = {"Accept": "application/json", **(headers or {})}
        if api_key:
            sent["Authorization"] = f"Bearer {api_key}"
        super().__init__(
            url, sent, context_tokens=context_tokens, max_output_tokens=max_output_tokens, http=http
        )
        self._mode_index = 0
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model or "default"

    @property
    def json_mode(self) -> JsonMode:
        """The way JSON will be asked for next (after any refusals so far)."""
        return JSON_MODES[self._mode_index]

    def complete(self, request: LLMRequest) -> LLMResult:
        if request.schema is None:
            return self._call(request, "none")
        while True:
            index = self._mode_index
            try:
                return self._call(request, JSON_MODES[index])
            except _FormatRefused:
                if index + 1 >= len(JSON_MODES):
                    raise LanguageModelError(  # prompt-only mode sends no format to refuse
                        "The language model server refused every way of asking for JSON."
                    ) from None
                with self._lock:
                    self._mode_index = max(self._mode_index, index + 1)

    def _body(self, request: LLMRequest, mode: JsonMode) -> dict[str, Any]:
        messages = list(request.messages)
        schema = request.schema
        if schema is not None and mode in ("json_object", "prompt"):
            messages = with_instruction(messages, schema_instruction(schema))
        body: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "max_tokens": request.max_output_tokens,
            "stream": False,
        }
        if self._model:
            body["model"] = self._model
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.seed is not None:
            body["seed"] = request.seed
        if schema is not None and mode in ("json_schema", "json_schema_portable"):
            sent = dict(schema) if mode == "json_schema" else portable_schema(schema)
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "strict": True, "schema": sent},
            }
        elif schema is not None and mode == "json_object":
            body["response_format"] = {"type": "json_object"}
        if request.tools:
            body["tools"] = [{"type": "function", "function": dict(t)} for t in request.tools]
        return body

    def _call(self, request: LLMRequest, mode: JsonMode) -> LLMResult:
        def refused(detail: ErrorDetail, _: httpx.Response) -> Exception | None:
            if (
                mode not in ("none", "prompt")
                and detail.status in (400, 422)
                and not is_context_overflow(detail)
                and detail.mentions(*_FORMAT_MARKERS)
            ):
                return _FormatRefused(detail.message)
            return None

        body, latency_ms = self._channel.post(
            self._body(request, mode), timeout_s=request.timeout_s, on_error=refused
        )
        return self._result(body, request, mode, latency_ms)

    def _result(
        self, body: dict[str, Any], request: LLMRequest, mode: JsonMode, latency_ms: float
    ) -> LLMResult:
        choices = body.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        if not isinstance(choice, dict):
            raise LanguageModelError("The language model server sent a reply with no choices.")
        message = choice.get("message")
        text = _content_text(message if isinstance(message, dict) else {})
        finish = str(choice.get("finish_reason") or "stop")
        if finish == "length":
            raise truncated(request.max_output_tokens, text)
        return LLMResult(
            text=text,
            data=find_json_object(text) if request.schema is not None else None,
            finish_reason=finish,
            usage=reply_usage(body, "prompt_tokens", "completion_tokens"),
            model=str(body.get("model") or self.model),
            latency_ms=latency_ms,
            json_mode=mode,
            tool_calls=_tool_calls(message if isinstance(message, dict) else {}),
        )


def _tool_calls(message: Mapping[str, Any]) -> tuple[LLMToolCall, ...]:
    """``message.tool_calls`` (function calls; arguments are JSON text on this protocol)."""
    calls = message.get("tool_calls")
    found: list[LLMToolCall] = []
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        found.append(LLMToolCall(str(call.get("id") or ""), function["name"], arguments))
    return tuple(found)


def _content_text(message: Mapping[str, Any]) -> str:
    """``content`` as text: a string, or the text parts of a content list; a refusal's text."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    refusal = message.get("refusal")
    return str(refusal) if isinstance(refusal, str) else ""
