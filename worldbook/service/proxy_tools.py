"""worldbook's tools inside the proxy (ADR 0017): the upstream calls ``lookup_lore`` (and,
for a living book, ``lore_create`` / ``lore_append``); the proxy answers and calls again.

:class:`ToolAnswerer` answers one call through the same use cases as ``POST /v1/lookup`` and
``POST /v1/writes`` (idempotent by call id, the living world's limits, undo). Its writes are
remembered, so a turn whose upstream later fails can take them back (:meth:`undo_all`): no
write stays behind that an answer the app received did not make. The protocol helpers read
and extend the two protocols' answers.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any

from worldbook.core.living_tools import WRITE_TOOLS
from worldbook.core.proxy_messages import Protocol
from worldbook.core.rendering import LOOKUP_TOOL_NAME
from worldbook.core.turn_request import TurnKind, TurnRequest
from worldbook.errors import WorldbookError
from worldbook.service.services import Services
from worldbook.service.turns import lookup
from worldbook.service.writes import WriteRequest, record_write

logger = logging.getLogger(__name__)
JSONDict = dict[str, Any]
OURS = frozenset({LOOKUP_TOOL_NAME, *WRITE_TOOLS})


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: object


@dataclass
class ToolAnswerer:
    """Answers worldbook's tool calls of one proxied turn."""

    services: Services
    request: TurnRequest
    living_book_id: str | None
    message_id: str
    written: list[str] = field(default_factory=list)

    def answer(self, call: ToolCall) -> str:
        """The tool result text the model reads (an error is a result too: the model may try
        again; nothing reaches the app)."""
        try:
            if call.name == LOOKUP_TOOL_NAME:
                return self._lookup(call.arguments)
            return self._write(call)
        except WorldbookError as exc:
            return f"Error: {exc.message}"

    def _lookup(self, arguments: object) -> str:
        title = arguments.get("title") if isinstance(arguments, dict) else None
        if not isinstance(title, str):
            return "Error: give the topic's title as the 'title' argument."
        turn = replace(self.request, kind=TurnKind.LOOKUP, messages=())
        found = lookup(self.services, turn, title=title)
        return f"# {found.title}\n{found.lore}"

    def _write(self, call: ToolCall) -> str:
        if self.living_book_id is None:
            return "Error: this world takes no new lore."
        outcome = record_write(
            self.services,
            self.request.user_id,
            WriteRequest(
                book_id=self.living_book_id,
                chat_id=self.request.chat_id or "",
                message_id=self.message_id,
                call_id=call.id[:255] or "call",
                tool=call.name,
                arguments=call.arguments,
            ),
        )
        if not outcome.replayed:
            self.written.append(outcome.write.id)
        return f"Saved to the world as {outcome.write.entry_title!r}."

    def undo_all(self) -> None:
        """Take back this turn's writes (its upstream failed after them)."""
        for write_id in reversed(self.written):
            try:
                self.services.writes.undo_write(write_id, reason="undo")
            except WorldbookError as exc:  # a person edited it meanwhile: theirs now
                logger.warning("proxy write %s kept: %s", write_id, exc.message)
        self.written.clear()


def _arguments(raw: object) -> object:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


# --- OpenAI Chat Completions -------------------------------------------------------------


def openai_calls(answer: JSONDict) -> list[ToolCall]:
    """Every tool call of the answer's first choice."""
    choices = answer.get("choices") or []
    message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
    calls = (message or {}).get("tool_calls") or []
    out = []
    for item in calls:
        function = item.get("function") or {}
        out.append(
            ToolCall(
                str(item.get("id", "")),
                str(function.get("name", "")),
                _arguments(function.get("arguments")),
            )
        )
    return out


def openai_continue(
    body: JSONDict, answer: JSONDict, results: list[tuple[ToolCall, str]]
) -> JSONDict:
    message = answer["choices"][0]["message"]
    turn = [
        {
            "role": "assistant",
            "content": message.get("content"),
            "tool_calls": message["tool_calls"],
        }
    ]
    turn += [{"role": "tool", "tool_call_id": c.id, "content": text} for c, text in results]
    return {**body, "messages": [*body["messages"], *turn]}


def openai_strip(answer: JSONDict) -> JSONDict:
    """The answer without worldbook's tool calls (the app never sees them)."""
    choice = answer["choices"][0]
    message = dict(choice["message"])
    kept = [
        c
        for c in message.get("tool_calls") or []
        if (c.get("function") or {}).get("name") not in OURS
    ]
    if kept:
        message["tool_calls"] = kept
    else:
        message.pop("tool_calls", None)
        if choice.get("finish_reason") == "tool_calls":
            choice = {**choice, "finish_reason": "stop"}
    return {**answer, "choices": [{**choice, "message": message}, *answer["choices"][1:]]}


# --- Anthropic Messages ------------------------------------------------------------------


def anthropic_calls(answer: JSONDict) -> list[ToolCall]:
    return [
        ToolCall(str(b.get("id", "")), str(b.get("name", "")), b.get("input"))
        for b in answer.get("content") or []
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]


def anthropic_continue(
    body: JSONDict, answer: JSONDict, results: list[tuple[ToolCall, str]]
) -> JSONDict:
    turn = [
        {"role": "assistant", "content": answer["content"]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": c.id, "content": text} for c, text in results
            ],
        },
    ]
    return {**body, "messages": [*body["messages"], *turn]}


def anthropic_strip(answer: JSONDict) -> JSONDict:
    content = [
        b
        for b in answer.get("content") or []
        if not (isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") in OURS)
    ]
    out = {**answer, "content": content}
    if answer.get("stop_reason") == "tool_use" and not any(
        b.get("type") == "tool_use" for b in content
    ):
        out["stop_reason"] = "end_turn"
    return out


def calls_of(protocol: Protocol, answer: JSONDict) -> list[ToolCall]:
    return openai_calls(answer) if protocol == "openai" else anthropic_calls(answer)


def continue_with(
    protocol: Protocol, body: JSONDict, answer: JSONDict, results: list[tuple[ToolCall, str]]
) -> JSONDict:
    if protocol == "openai":
        return openai_continue(body, answer, results)
    return anthropic_continue(body, answer, results)


def strip(protocol: Protocol, answer: JSONDict) -> JSONDict:
    return openai_strip(answer) if protocol == "openai" else anthropic_strip(answer)


_USAGE = {
    "openai": ("prompt_tokens", "completion_tokens", "total_tokens"),
    "anthropic": ("input_tokens", "output_tokens"),
}


def add_usage(protocol: Protocol, total: JSONDict | None, usage: object) -> JSONDict | None:
    """Usage summed over the rounds of a turn (the app is billed for all of them)."""
    if not isinstance(usage, dict):
        return total
    if total is None:
        return dict(usage)
    out = dict(usage)
    for name in _USAGE[protocol]:
        if isinstance(total.get(name), int) and isinstance(usage.get(name), int):
            out[name] = total[name] + usage[name]
    return out
