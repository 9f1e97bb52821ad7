"""The ``LLM`` port: how worldbook talks to the app's own language model (docs/ai-authoring.md §4).

One call, one reply: ``complete(request) -> result``. A request may carry a JSON Schema; the
adapter then asks the model for JSON in the strongest way its server supports (structured
output, forced tool use, JSON mode, or the prompt alone) and parses the reply into
``result.data``. Adapters never trust the model: callers validate ``data`` with their own
Pydantic models and the DESIGN §6 limits (:mod:`worldbook.service.llm_replies`).

Failures are :mod:`worldbook.errors` types — ``LLMAuthFailed``, ``LLMRateLimited``,
``LLMTimeout``, ``LLMContextTooLong``, ``LLMTruncated`` (carrying the partial reply),
``LLMUnavailable`` — never an HTTP library's exception.

This module is pure (dataclasses and a Protocol); it belongs beside the other ports in
``worldbook/ports.py`` once that module settles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant"]
JsonMode = Literal["none", "json_schema", "json_schema_portable", "json_object", "prompt", "tool"]


@dataclass(frozen=True, slots=True)
class LLMMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class LLMRequest:
    """One call to the model.

    Args:
        messages: the conversation, system messages first.
        schema: a JSON Schema (an object schema) the reply must follow, or None for free text.
        schema_name: the schema's name (``[a-zA-Z0-9_-]{1,64}``; OpenAI and Anthropic want one).
        max_output_tokens: the most tokens the reply may hold.
        temperature: sampling temperature; None leaves the server's default.
        seed: asks servers that support it (OpenAI-compatible) for repeatable sampling.
        timeout_s: this call's timeout; None uses the adapter's.
        tools: neutral tool definitions (``name``, ``description``, ``parameters``: the
            selection's ``RenderedPrompt.tools``) the model may call; its calls come back in
            ``LLMResult.tool_calls``. Not combined with ``schema``.
    """

    messages: Sequence[LLMMessage]
    schema: Mapping[str, Any] | None = None
    schema_name: str = "reply"
    max_output_tokens: int = 1024
    temperature: float | None = None
    seed: int | None = None
    timeout_s: float | None = None
    tools: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, slots=True)
class LLMToolCall:
    """One tool call the model made: its id (the app's ``call_id``), the tool's name and its
    arguments as the JSON text the model wrote (not validated: the tool's owner does that)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class LLMUsage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class LLMResult:
    """The model's reply.

    ``data`` is the parsed JSON value when a schema was asked for and the text parsed (None
    otherwise — the caller decides what an unparseable reply means). ``json_mode`` says how
    JSON was obtained, for logs and tests.
    """

    text: str
    data: Any = None
    finish_reason: str = "stop"
    usage: LLMUsage = field(default_factory=LLMUsage)
    model: str = ""
    latency_ms: float = 0.0
    json_mode: JsonMode = "none"
    tool_calls: tuple[LLMToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class LLMCapabilities:
    """What callers may plan around: the context window sizes prompts (split previews)."""

    json_schema: bool = True
    tools: bool = False
    context_tokens: int = 8192
    max_output_tokens: int = 4096


@runtime_checkable
class LLM(Protocol):
    """A chat model. Implementations: ``worldbook.adapters.llm`` (OpenAI-compatible HTTP,
    Anthropic Messages); tests use a scripted fake."""

    @property
    def capabilities(self) -> LLMCapabilities: ...

    @property
    def model(self) -> str:
        """The model name for reports (``"gpt-4o-mini"``; a local server's file name)."""
        ...

    def complete(self, request: LLMRequest) -> LLMResult: ...
