"""Streaming turns (ADR 0017): the app's text streams as it arrives; a worldbook tool call is
held back, answered, and the next round streams on in the same response.

The first upstream call is opened before the response starts, so an upstream error still
reaches the app with its own status and body. Each protocol has a round reader that forwards
events unchanged except those it must hold: tool calls (until it knows whose they are), the
finish (until the last round) and usage (summed over the rounds). A client that goes away
closes the generator, which closes the upstream stream and stops the model's work.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fastapi.responses import Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from worldbook.adapters.upstream import Stream
from worldbook.api.proxy_http import Turn
from worldbook.errors import WorldbookError
from worldbook.service.proxy_tools import OURS, ToolCall, add_usage, continue_with

JSONDict = dict[str, Any]


def sse(payload: JSONDict | str, event: str | None = None) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


@dataclass
class Round:
    """What one upstream round held back and assembled."""

    text: str = ""
    calls: dict[int, JSONDict] = field(default_factory=dict)  # index → id, name, arguments
    held: dict[int, list[str]] = field(default_factory=dict)  # index → events as received
    finish: JSONDict | None = None
    usage: JSONDict | None = None
    usage_chunk: JSONDict = field(default_factory=dict)  # openai: the chunk that carried it
    blocks: list[JSONDict] = field(default_factory=list)  # anthropic: the content blocks

    def tool_calls(self) -> list[ToolCall]:
        return [
            ToolCall(c.get("id", ""), c.get("name", ""), _args(c.get("arguments", "")))
            for _, c in sorted(self.calls.items())
        ]


def _args(raw: str) -> object:
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return raw


async def stream(turn: Turn) -> Response:
    upstream = Stream(turn.upstream, turn.plan.body, turn.passed)
    status = await upstream.open()
    if status >= 300:
        body = await upstream.read_all()
        await run_in_threadpool(turn.answerer.undo_all)
        return Response(body, status, turn.headers(), media_type="application/json")
    events = _openai(turn, upstream) if turn.protocol == "openai" else _anthropic(turn, upstream)
    return StreamingResponse(events, media_type="text/event-stream", headers=turn.headers())


async def _rounds(turn: Turn, first: Stream, reader: Any) -> AsyncIterator[str]:
    """Rounds until the model calls none of worldbook's tools (or the rounds run out)."""
    body, current, usage = turn.plan.body, first, None
    try:
        for round_no in range(turn.rounds):
            state = Round()
            try:
                async for out in reader(current, state, round_no):
                    yield out
            finally:
                await current.close()
            usage = add_usage(turn.protocol, usage, state.usage)
            calls = state.tool_calls()
            ours = [c for c in calls if c.name in OURS]
            if not ours or len(ours) < len(calls) or round_no == turn.rounds - 1:
                for out in _finish(turn, state, usage, ours):
                    yield out
                return
            results = [(c, await run_in_threadpool(turn.answerer.answer, c)) for c in ours]
            body = continue_with(turn.protocol, body, _assembled(turn, state), results)
            current = Stream(turn.upstream, body, turn.passed)
            status = await current.open()
            if status >= 300:
                detail = (await current.read_all()).decode(errors="replace")[:500]
                raise WorldbookError(f"The upstream model failed ({status}): {detail}")
    except WorldbookError as exc:
        await run_in_threadpool(turn.answerer.undo_all)
        yield _error_event(turn, exc.message)
    except (ValueError, KeyError, TypeError):  # an event that is not the protocol's JSON
        await run_in_threadpool(turn.answerer.undo_all)
        yield _error_event(
            turn, f"The upstream at {turn.upstream.base_url} sent a malformed event."
        )


def _error_event(turn: Turn, message: str) -> str:
    if turn.protocol == "openai":
        return sse({"error": {"message": message, "type": "api_error", "code": "upstream"}})
    return sse({"type": "error", "error": {"type": "api_error", "message": message}}, "error")


def _assembled(turn: Turn, state: Round) -> JSONDict:
    """The round's answer in the non-streaming shape, for the next round's messages."""
    if turn.protocol == "openai":
        calls = [
            {
                "id": c.get("id", ""),
                "type": "function",
                "function": {"name": c.get("name", ""), "arguments": c.get("arguments", "")},
            }
            for _, c in sorted(state.calls.items())
        ]
        message = {"content": state.text or None, "tool_calls": calls}
        return {"choices": [{"message": message}]}
    return {"content": state.blocks}


def _finish(turn: Turn, state: Round, usage: JSONDict | None, ours: list[ToolCall]) -> list[str]:
    """The held events of the last round: the app's own tool calls, the finish, the usage."""
    out: list[str] = []
    kept = {i for i, c in state.calls.items() if c.get("name") not in OURS}
    for index in sorted(kept):
        out += state.held.get(index, [])
    if turn.protocol == "openai":
        if state.finish is not None:
            if not kept and ours:
                state.finish["choices"][0]["finish_reason"] = "stop"
            if usage is not None and not state.usage_chunk:
                state.finish["usage"] = usage
            out.append(sse(state.finish))
        if state.usage_chunk:
            out.append(sse({**state.usage_chunk, "usage": usage}))
        out.append("data: [DONE]\n\n")
        return out
    finish = state.finish or {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    if not kept and ours and finish.get("delta", {}).get("stop_reason") == "tool_use":
        finish["delta"]["stop_reason"] = "end_turn"
    if usage is not None:
        finish["usage"] = usage
    out.append(sse(finish, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


def _openai(turn: Turn, first: Stream) -> AsyncIterator[str]:
    async def reader(current: Stream, state: Round, round_no: int) -> AsyncIterator[str]:
        async for line in current.lines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                break
            chunk = json.loads(payload)
            choices = chunk.get("choices") or []
            delta = (choices[0].get("delta") or {}) if choices else {}
            if chunk.get("usage") and not choices:
                state.usage = chunk["usage"]
                state.usage_chunk = chunk
                continue
            if delta.get("tool_calls"):
                _hold_openai(state, delta["tool_calls"], payload)
                continue
            if choices and choices[0].get("finish_reason"):
                if delta.get("content"):
                    yield sse({**chunk, "choices": [{**choices[0], "finish_reason": None}]})
                state.finish = {**chunk, "choices": [{**choices[0], "delta": {}}]}
                if chunk.get("usage"):
                    state.usage = chunk["usage"]
                continue
            state.text += delta.get("content") or ""
            yield f"data: {payload}\n\n"

    return _rounds(turn, first, reader)


def _hold_openai(state: Round, deltas: list[JSONDict], payload: str) -> None:
    for item in deltas:
        index = int(item.get("index", 0))
        call = state.calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
        function = item.get("function") or {}
        call["id"] = item.get("id") or call["id"]
        call["name"] = function.get("name") or call["name"]
        call["arguments"] += function.get("arguments") or ""
        state.held.setdefault(index, []).append(f"data: {payload}\n\n")


def _anthropic(turn: Turn, first: Stream) -> AsyncIterator[str]:
    sent = [0]  # content blocks the app has been shown, over all rounds (their indexes)

    async def reader(current: Stream, state: Round, round_no: int) -> AsyncIterator[str]:
        shown: dict[int, int] = {}  # the upstream's block index → the app's
        blocks: dict[int, JSONDict] = {}
        async for line in current.lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:].strip())
            kind = event.get("type")
            if kind == "message_start":
                usage = (event.get("message") or {}).get("usage") or {}
                state.usage = {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 0}
                if round_no == 0:
                    yield sse(event, kind)
            elif kind == "content_block_start":
                index, block = int(event["index"]), dict(event.get("content_block") or {})
                blocks[index] = block
                if block.get("type") == "tool_use":
                    state.calls[index] = {"id": block.get("id", ""), "name": block.get("name")}
                    state.calls[index]["arguments"] = ""
                if block.get("name") not in OURS or block.get("type") != "tool_use":
                    shown[index] = sent[0]
                    sent[0] += 1
                    yield sse({**event, "index": shown[index]}, kind)
            elif kind in ("content_block_delta", "content_block_stop"):
                index = int(event["index"])
                _grow(blocks.get(index), state.calls.get(index), event.get("delta") or {})
                if kind == "content_block_stop" and index in blocks:
                    state.blocks.append(_closed(blocks[index], state.calls.get(index)))
                if index in shown:
                    yield sse({**event, "index": shown[index]}, kind)
            elif kind == "message_delta":
                state.finish = event
                out = (event.get("usage") or {}).get("output_tokens", 0)
                state.usage = {**(state.usage or {}), "output_tokens": out}
            elif kind != "message_stop":
                yield sse(event, kind)

    return _rounds(turn, first, reader)


def _grow(block: JSONDict | None, call: JSONDict | None, delta: JSONDict) -> None:
    if block is None:
        return
    if delta.get("type") == "text_delta":
        block["text"] = block.get("text", "") + delta.get("text", "")
    elif delta.get("type") == "input_json_delta" and call is not None:
        call["arguments"] += delta.get("partial_json", "")


def _closed(block: JSONDict, call: JSONDict | None) -> JSONDict:
    if block.get("type") == "tool_use" and call is not None:
        return {**block, "input": _args(call["arguments"])}
    return block
