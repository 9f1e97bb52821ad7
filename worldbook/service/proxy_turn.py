"""The proxy's turn (ADR 0017): from an app's OpenAI or Anthropic request to the request that
goes upstream, through the same selection as ``/v1/select`` (:func:`run_turn`: same trace,
usage and request log).

Budgets leave the app's prompt room: the app's request is measured with the connection's
tokenizer, the reply's tokens (``max_tokens``, else ``WORLDBOOK_PROXY_OUTPUT_RESERVE``) are
kept free, and the selection runs with a window whose canon budget fits what is left. Should
the rendered lore still not fit (a classic lorebook slot, tool definitions), the per-turn part
is given up first, then all of it; :attr:`ProxyPlan.given_up` says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from worldbook.core.connections import ConnectionRecord
from worldbook.core.proxy_messages import (
    Protocol,
    app_prompt_text,
    chat_key,
    conversation,
    recent,
    splice_anthropic,
    splice_openai,
)
from worldbook.core.rendering import RenderedPrompt
from worldbook.core.turn_request import BookSource, CastMember, ChatCounts, TurnKind, TurnRequest
from worldbook.core.types import ModelProfile
from worldbook.errors import InvalidInput
from worldbook.service.services import Services
from worldbook.service.turns import TurnResult, run_turn

JSONDict = dict[str, Any]
CHAT_HEADER = "X-Worldbook-Chat"
_NO_LORE = RenderedPrompt(stable="", per_turn="", supports_tools=False)


@dataclass(frozen=True, slots=True)
class ProxyPlan:
    """What goes upstream, and what the turn decided."""

    body: JSONDict
    chat_id: str
    request: TurnRequest
    result: TurnResult | None
    rendered: RenderedPrompt
    room: int
    lore_tokens: int
    given_up: tuple[str, ...] = field(default=())

    def summary(self) -> JSONDict:
        """The ``X-Worldbook-Trace`` header: the chat, what went in, what was given up (the
        full trace is in the chat's request log, ``GET /v1/chats/{chat}/log``)."""
        selection = self.result.selection if self.result is not None else None
        return {
            "chat": self.chat_id,
            "canon": len(selection.canon) if selection else 0,
            "injected": len(selection.injected) if selection else 0,
            "index": len(selection.index) if selection else 0,
            "lore_tokens": self.lore_tokens,
            "room": self.room,
            "given_up": list(self.given_up),
        }

    def header(self) -> str:
        return json.dumps(self.summary(), ensure_ascii=True, separators=(",", ":"))


def source_of(connection: ConnectionRecord) -> BookSource:
    spec = connection.spec
    cast: tuple[CastMember, ...] = ()
    if spec.character_id is not None:
        cast = (CastMember(spec.character_id, spec.char_name),)
    return BookSource(book_ids=spec.book_ids, story_id=spec.story_id, characters=cast)


def output_reserve(body: JSONDict, default: int) -> int:
    """The reply's tokens: the app's ``max_tokens`` / ``max_completion_tokens`` if given."""
    for name in ("max_completion_tokens", "max_tokens"):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return default


def plan_turn(
    services: Services,
    connection: ConnectionRecord,
    protocol: Protocol,
    body: JSONDict,
    chat_header: str | None,
) -> ProxyPlan:
    """Select the turn's lore and splice it into the app's request."""
    spec = connection.spec
    messages = conversation(body)
    if not any(m.role == "user" for m in messages):
        raise InvalidInput(
            "messages must hold at least one user message with text.", field="messages"
        )
    chat_id = (chat_header or "").strip()[:255] or chat_key(connection.id, messages)
    counter = services.token_counter(spec.tokenizer)
    tokenizer = counter.tokenizer
    reserve = output_reserve(body, services.settings.proxy_output_reserve)
    room = spec.input_window - tokenizer.count(app_prompt_text(body)) - reserve
    tools = spec.supports_tools if spec.supports_tools is not None else bool(body.get("tools"))
    window = max(1, min(spec.input_window, int(max(room, 0) / services.rules.canon_share)))
    profile = ModelProfile(input_window=window, tokenizer_id=spec.tokenizer, supports_tools=tools)
    request = TurnRequest(
        user_id=connection.owner_id,
        source=source_of(connection),
        profile=profile,
        messages=tuple(recent(messages)),
        chat_id=chat_id,
        user_name=spec.user_name,
        counts=ChatCounts(
            chat_length=len(messages),
            assistant_messages=sum(m.role == "assistant" for m in messages),
        ),
        kind=TurnKind.SELECT,
    )
    if room <= 0:
        plan_body = dict(body)
        return ProxyPlan(plan_body, chat_id, request, None, _NO_LORE, room, 0, ("all_lore",))
    result = run_turn(services, request)
    rendered, used, given_up = fit(result.rendered, room, tokenizer.count)
    splice = splice_openai if protocol == "openai" else splice_anthropic
    return ProxyPlan(
        splice(body, rendered), chat_id, request, result, rendered, room, used, given_up
    )


def lore_tokens(rendered: RenderedPrompt, count: Any) -> int:
    texts = [rendered.stable, rendered.per_turn, *(text for _, text in rendered.lorebook)]
    total = sum(count(t) for t in texts if t)
    if rendered.tools:
        total += count(json.dumps(rendered.tools, ensure_ascii=False))
    return int(total)


def fit(
    rendered: RenderedPrompt, room: int, count: Any
) -> tuple[RenderedPrompt, int, tuple[str, ...]]:
    """The rendered lore within ``room`` tokens: the per-turn part goes first, then all."""
    used = lore_tokens(rendered, count)
    if used <= room:
        return rendered, used, ()
    lighter = replace(rendered, per_turn="")
    used = lore_tokens(lighter, count)
    if used <= room:
        return lighter, used, ("per_turn",)
    return _NO_LORE, 0, ("per_turn", "all_lore")
