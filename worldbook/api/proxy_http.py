"""One proxied turn over HTTP (ADR 0017): open the connection, plan the turn (selection and
splice, ``service/proxy_turn.py``), call the upstream — answering worldbook's tool calls in a
bounded loop — and hand the upstream's answer back in its own shape.

Blocking work (the store, the selection) runs in the thread pool; the upstream calls are
asynchronous, so a slow model holds no thread.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from worldbook.adapters.upstream import Upstream, call
from worldbook.api.proxy_errors import error_of, protocol_error
from worldbook.core.proxy_messages import Protocol, conversation
from worldbook.errors import InvalidInput, LanguageModelError, WorldbookError
from worldbook.service.connections import OpenConnection, open_connection
from worldbook.service.proxy_tools import OURS, ToolAnswerer, add_usage, calls_of, continue_with
from worldbook.service.proxy_tools import strip as strip_ours
from worldbook.service.proxy_turn import CHAT_HEADER, ProxyPlan, plan_turn
from worldbook.service.services import Services
from worldbook.service.writes import undo_message

JSONDict = dict[str, Any]
_PASSED = {"anthropic": ("anthropic-version", "anthropic-beta"), "openai": ()}


def token_of(request: Request) -> str | None:
    """The connection token, where SDKs put their API key."""
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.headers.get("x-api-key")


def check_protocol(upstream_kind: str, protocol: Protocol) -> None:
    """A connection answers only at its upstream's protocol (docs/design/proxy.md, The turn)."""
    if upstream_kind != protocol:
        raise InvalidInput(
            f"This connection's upstream speaks {upstream_kind}; point the app at "
            f"/{upstream_kind}/v1 instead.",
            field="base_url",
        )


async def body_of(request: Request) -> JSONDict:
    try:
        body = json.loads(await request.body())
    except ValueError:
        raise InvalidInput("The body is not valid JSON.", field="body") from None
    if not isinstance(body, dict):
        raise InvalidInput("The body must be a JSON object.", field="body")
    if not isinstance(body.get("messages"), list):
        raise InvalidInput("messages must be a list of messages.", field="messages")
    return body


@dataclass
class Turn:
    """A planned turn, ready to go upstream."""

    protocol: Protocol
    plan: ProxyPlan
    upstream: Upstream
    passed: dict[str, str]
    answerer: ToolAnswerer
    rounds: int
    turn_ms: float = 0.0  # worldbook's own part: the token, the selection, the splice

    def headers(self) -> dict[str, str]:
        return {
            "X-Worldbook-Trace": self.plan.header(),
            "X-Worldbook-Chat": self.plan.chat_id,
            "Server-Timing": f"turn;dur={self.turn_ms:.2f}",
        }


def _plan(
    services: Services, opened: OpenConnection, protocol: Protocol, body: JSONDict, chat: str | None
) -> tuple[ProxyPlan, ToolAnswerer]:
    plan = plan_turn(services, opened.record, protocol, body, chat)
    living = plan.result.living_book_id if plan.result is not None else None
    message_id = f"proxy-{len(conversation(body))}"
    if living is not None:
        # A regenerate sends the same chat again: the answer it replaces takes its writes
        # with it (the /v1/writes regenerate contract).
        undo_message(services, opened.record.owner_id, plan.chat_id, message_id)
    return plan, ToolAnswerer(services, plan.request, living, message_id)


def _open_and_plan(
    services: Services,
    token: str | None,
    protocol: Protocol,
    body: JSONDict | InvalidInput,
    chat: str | None,
) -> tuple[OpenConnection, ProxyPlan, ToolAnswerer]:
    """The blocking part of a turn, in one trip to the thread pool."""
    opened = open_connection(services, token)
    if isinstance(body, InvalidInput):
        raise body
    spec = opened.record.spec
    check_protocol(spec.upstream_kind, protocol)
    if spec.upstream_model:
        body["model"] = spec.upstream_model  # the connection fixes the model
    plan, answerer = _plan(services, opened, protocol, body, chat)
    return opened, plan, answerer


async def prepare(request: Request, services: Services, protocol: Protocol) -> Turn:
    try:
        body: JSONDict | InvalidInput = await body_of(request)
    except InvalidInput as bad:
        body = bad  # said after the token is checked: a stranger learns nothing first
    chat = request.headers.get(CHAT_HEADER)
    started = time.perf_counter()
    opened, plan, answerer = await run_in_threadpool(
        _open_and_plan, services, token_of(request), protocol, body, chat
    )
    took = (time.perf_counter() - started) * 1000
    spec = opened.record.spec
    settings = services.settings
    upstream = Upstream(
        protocol,
        spec.upstream_url,
        opened.upstream_key,
        settings.proxy_timeout_s,
        settings.proxy_connect_timeout_s,
    )
    passed = {h: request.headers[h] for h in _PASSED[protocol] if h in request.headers}
    return Turn(protocol, plan, upstream, passed, answerer, settings.proxy_tool_rounds, took)


def not_json(turn: Turn) -> LanguageModelError:
    return LanguageModelError(
        f"The upstream model at {turn.upstream.base_url} answered with something other than "
        f"{turn.protocol} JSON; check the connection's upstream_url and upstream_kind."
    )


def _may_call_tools(raw: bytes) -> bool:
    return b'"tool_calls"' in raw or b'"tool_use"' in raw


async def complete(turn: Turn) -> Response:
    """A non-streaming turn: rounds until the model calls none of worldbook's tools."""
    body, usage = turn.plan.body, None
    try:
        for round_no in range(turn.rounds):
            answer = await call(turn.upstream, body, turn.passed)
            if answer.status >= 300:  # the upstream's own error: its status and body
                await run_in_threadpool(turn.answerer.undo_all)
                return Response(
                    answer.body, answer.status, turn.headers(), media_type=answer.content_type
                )
            if round_no == 0 and not _may_call_tools(answer.body):
                # The common turn: the upstream's bytes as they came (nothing to hide or sum).
                return Response(
                    answer.body, answer.status, turn.headers(), media_type=answer.content_type
                )
            try:
                data = json.loads(answer.body)
            except ValueError:
                raise not_json(turn) from None
            usage = add_usage(turn.protocol, usage, data.get("usage"))
            calls = calls_of(turn.protocol, data)
            ours = [c for c in calls if c.name in OURS]
            if not ours or len(ours) < len(calls) or round_no == turn.rounds - 1:
                break
            results = [(c, await run_in_threadpool(turn.answerer.answer, c)) for c in ours]
            body = continue_with(turn.protocol, body, data, results)
        final = strip_ours(turn.protocol, data)
    except WorldbookError:
        await run_in_threadpool(turn.answerer.undo_all)
        raise
    except (KeyError, IndexError, TypeError, AttributeError):  # JSON, but not the protocol's
        await run_in_threadpool(turn.answerer.undo_all)
        raise not_json(turn) from None
    if usage is not None:
        final["usage"] = usage
    return JSONResponse(final, headers=turn.headers())


async def handle(request: Request, services: Services, protocol: Protocol) -> Response:
    """The route body of both protocols; worldbook's errors in the protocol's shape."""
    from worldbook.api.proxy_stream import stream

    try:
        turn = await prepare(request, services, protocol)
        if turn.plan.body.get("stream") is True:
            return await stream(turn)
        return await complete(turn)
    except WorldbookError as exc:
        return error_of(protocol, exc)


__all__ = ["handle", "protocol_error"]
