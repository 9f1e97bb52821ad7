"""Asking a language model for JSON, validating every item, and one repair round trip.

The shared discipline of AI authoring (docs/ai-authoring.md §4 "Structured
output and validation"): the reply is parsed (a reply cut at the output limit keeps its whole
items), every item is validated by our own Pydantic model and the DESIGN §6 limits, and the
problems found are sent back *once*, with the model's own reply, so it can correct them; what
still fails is dropped and reported. A failure of the repair call itself never loses the first
reply's good items. Generate, split and the living world all use these helpers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from worldbook.core.json_reply import close_truncated_json, find_json_object
from worldbook.errors import LLM_FAILURES, LLMNotConfigured, LLMTruncated, WorldbookError
from worldbook.llm_port import LLM, LLMMessage, LLMRequest

M = TypeVar("M", bound=BaseModel)
PROBLEMS_LISTED = 20  # problems quoted back to the model in the repair message
REPLY_QUOTED = 6_000  # characters of the model's own reply quoted back


def not_configured(feature: str) -> LLMNotConfigured:
    """The 503 for an AI feature asked of a deployment with no model (names the setting)."""
    return LLMNotConfigured(
        f"No language model is configured, so {feature} is not available. Set "
        "WORLDBOOK_LLM_URL (an OpenAI-compatible server's /v1 URL, or https://api.anthropic.com), "
        "plus WORLDBOOK_LLM_API_KEY and WORLDBOOK_LLM_MODEL if it needs them."
    )


@dataclass(frozen=True, slots=True)
class JsonReply:
    """A model reply as JSON: ``data`` is None when no object could be read; ``problems``
    are reply-level (not JSON, cut short), item problems are the caller's."""

    data: dict[str, Any] | None
    text: str
    problems: tuple[str, ...] = ()
    truncated: bool = False


def ask_json(llm: LLM, request: LLMRequest) -> JsonReply:
    """One call; a cut reply is rescued (whole items kept), prose around JSON is skipped."""
    try:
        result = llm.complete(request)
    except LLMTruncated as cut:
        rescued = close_truncated_json(cut.partial)
        return JsonReply(
            rescued,
            cut.partial,
            (
                f"the reply was cut off at the output limit ({request.max_output_tokens} "
                "tokens); write less",
            ),
            truncated=True,
        )
    data = result.data if isinstance(result.data, dict) else find_json_object(result.text)
    if data is None:
        return JsonReply(None, result.text, ("the reply is not a JSON object",))
    return JsonReply(data, result.text)


def items_of(reply: JsonReply, key: str) -> tuple[list[Any], list[str]]:
    """The array under ``key`` and a problem when it is missing or not an array."""
    if reply.data is None:
        return [], []
    value = reply.data.get(key)
    if isinstance(value, list):
        return value, []
    return [], [f"the reply has no {key!r} array"]


def validate_item(model: type[M], raw: object, where: str) -> tuple[M | None, list[str]]:
    """``raw`` as ``model``, or the problems, each naming the field (``entries[2].title``)."""
    try:
        return model.model_validate(raw), []
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:5]:
            loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
            problems.append(f"{where}{loc}: {error['msg']}")
        return None, problems


def repair_request(
    request: LLMRequest, reply: JsonReply, problems: Sequence[str], instruction: str
) -> LLMRequest:
    """The original conversation, the model's reply, and a message listing its problems."""
    listed = [f"- {p}" for p in problems[:PROBLEMS_LISTED]]
    if len(problems) > PROBLEMS_LISTED:
        listed.append(f"- … and {len(problems) - PROBLEMS_LISTED} more")
    quoted = reply.text if len(reply.text) <= REPLY_QUOTED else reply.text[:REPLY_QUOTED] + "…"
    messages = [
        *request.messages,
        LLMMessage("assistant", quoted or "(empty reply)"),
        LLMMessage(
            "user", "Your reply had these problems:\n" + "\n".join(listed) + "\n\n" + instruction
        ),
    ]
    return replace(request, messages=tuple(messages))


def ask_repair(llm: LLM, request: LLMRequest) -> tuple[JsonReply | None, str | None]:
    """The repair call; a failure of the model is reported, not raised (round one stands)."""
    try:
        return ask_json(llm, request), None
    except LLM_FAILURES as exc:
        assert isinstance(exc, WorldbookError)
        return None, f"the repair request failed ({exc.message})"
