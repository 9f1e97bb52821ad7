"""A scripted ``LLM`` for unit tests: queued replies (or errors), every request recorded; and
the one-entry lore request the adapter tests send."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from typing import Any

from worldbook.llm_port import LLMCapabilities, LLMMessage, LLMRequest, LLMResult


def lore_request(schema: dict[str, Any], text: str = "One entry.", **options: Any) -> LLMRequest:
    """A request for one lore entry shaped by ``schema``, as the generator asks for it."""
    return LLMRequest(
        messages=(LLMMessage("system", "You write lore."), LLMMessage("user", text)),
        schema=schema,
        schema_name="entry",
        **options,
    )


class ScriptedLLM:
    """Serves ``replies`` in order: a dict/list is sent as JSON text, a str as is, an
    ``LLMResult`` as it is (tool calls, say), an exception instance is raised. Running out of
    replies is a test bug (AssertionError)."""

    def __init__(
        self,
        replies: Iterable[Any],
        *,
        context_tokens: int = 8192,
        max_output_tokens: int = 4096,
        model: str = "scripted",
    ) -> None:
        self.replies: deque[Any] = deque(replies)
        self.requests: list[LLMRequest] = []
        self.capabilities = LLMCapabilities(
            context_tokens=context_tokens, max_output_tokens=max_output_tokens
        )
        self.model = model

    def complete(self, request: LLMRequest) -> LLMResult:
        self.requests.append(request)
        assert self.replies, "the scripted LLM ran out of replies"
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, LLMResult):
            return reply
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        data = reply if isinstance(reply, dict) else None
        return LLMResult(text=text, data=data, model=self.model, json_mode="json_schema")


def entry(
    title: str, lore: str | None = None, *aliases: str, canon: bool = False
) -> dict[str, Any]:
    """One generated entry whose lore names its title and passes the 20-character minimum."""
    return {
        "title": title,
        "lore": lore if lore is not None else f"{title} is a place of old stories and new trouble.",
        "aliases": list(aliases),
        "canon": canon,
    }


def book(*entries: dict[str, Any], title: str = "The Drowned Coast") -> dict[str, Any]:
    return {"title": title, "description": "A coast of sunken cities.", "entries": list(entries)}


class StaticLLM:
    """Always the same valid reply per request kind (for fuzzing the routes behind a model):
    a 4-entry book for generate, a one-range plan for split."""

    capabilities = LLMCapabilities()
    model = "static"

    def complete(self, request: LLMRequest) -> LLMResult:
        if request.schema_name == "split_plan":
            reply: dict[str, Any] = {
                "entries": [{"title": "Everything", "aliases": [], "first": 1, "last": 1}]
            }
        else:
            reply = book(
                *(entry(name) for name in ("Port Vel", "Iron Guild", "Salt Queen", "Ghost Reef"))
            )
        return LLMResult(text=json.dumps(reply), data=reply, model=self.model)
