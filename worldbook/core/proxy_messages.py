"""The proxy's reading and writing of an app's request (ADR 0017, DESIGN §2.9): pure functions
over the JSON bodies of the OpenAI Chat Completions and Anthropic Messages protocols.

- :func:`conversation` reads the turn's messages (roles, names, text parts) for the selection;
- :func:`chat_key` names a chat the app did not name;
- :func:`splice_openai` / :func:`splice_anthropic` place the rendered lore after the app's own
  system prompt (stable part first, per-turn part after it) and add worldbook's tools after the
  app's own. Every other field of the body is left exactly as the app sent it.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any, Literal

from worldbook.core.limit_table import LIMITS
from worldbook.core.rendering import RenderedPrompt
from worldbook.core.types import Message, Role

JSONDict = dict[str, Any]
Protocol = Literal["openai", "anthropic"]
_SPOKEN = ("user", "assistant")


def text_of(content: object) -> str:
    """The text of a message's content: a string, or the text of its text parts / blocks
    (images, tool calls and tool results carry no text the selection reads)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text":
            text = part.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(parts)


def conversation(body: JSONDict) -> list[Message]:
    """The user and assistant messages of a request, oldest first, with their text (either
    protocol: both keep them in ``messages``). Messages without text are left out."""
    found: list[Message] = []
    for item in body.get("messages") or []:
        if not isinstance(item, dict) or item.get("role") not in _SPOKEN:
            continue
        text = text_of(item.get("content")).strip()
        name = item.get("name")
        if text:
            role: Role = "user" if item["role"] == "user" else "assistant"
            found.append(Message(role=role, content=text, name=name if _is_name(name) else None))
    return found


def _is_name(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 255


def recent(messages: list[Message]) -> list[Message]:
    """The newest messages within the turn's text limits (each cut to its newest characters,
    oldest dropped first): the selection reads the recent chat, never an unbounded one."""
    kept: list[Message] = []
    total = 0
    for message in reversed(messages):
        text = message.content[-LIMITS.message_max :]
        if total + len(text) > LIMITS.turn_text_max:
            break
        total += len(text)
        kept.append(Message(role=message.role, content=text, name=message.name))
    return kept[::-1]


def chat_key(connection_id: str, messages: list[Message]) -> str:
    """A chat the app did not name: the connection and the chat's first user message, hashed.
    The first message does not change as a chat grows, on regenerate or when a later message
    is edited, so those stay one chat; editing the first message starts another."""
    first = next((m.content for m in messages if m.role == "user"), "")
    digest = hashlib.sha256(f"{connection_id}\n{first}".encode("utf-8", "surrogatepass"))
    return "proxy-" + digest.hexdigest()[:32]


def splice_openai(body: JSONDict, rendered: RenderedPrompt) -> JSONDict:
    """The body with the lore messages after the app's leading system (or developer) messages
    and worldbook's tools after the app's own; nothing else changes."""
    out = copy.copy(body)
    messages = list(body.get("messages") or [])
    head = 0
    while head < len(messages) and _role(messages[head]) in ("system", "developer"):
        head += 1
    out["messages"] = [*messages[:head], *rendered.openai_messages(), *messages[head:]]
    tools = rendered.openai_tools()
    if tools:
        out["tools"] = [*(body.get("tools") or []), *tools]
    return out


def splice_anthropic(body: JSONDict, rendered: RenderedPrompt) -> JSONDict:
    """The body with the lore's system blocks after the app's ``system`` (a string becomes
    one text block), spoken lorebook entries at the head of the messages, and worldbook's
    tools after the app's own."""
    out = copy.copy(body)
    lore = rendered.anthropic()
    system = body.get("system")
    blocks: list[Any] = [{"type": "text", "text": system}] if isinstance(system, str) else []
    if isinstance(system, list):
        blocks = list(system)
    if lore["system"]:
        out["system"] = [*blocks, *lore["system"]]
    if lore.get("messages"):
        out["messages"] = [*lore["messages"], *(body.get("messages") or [])]
    if lore.get("tools"):
        out["tools"] = [*(body.get("tools") or []), *lore["tools"]]
    return out


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, dict) else None


def app_prompt_text(body: JSONDict) -> str:
    """Everything of the app's request a tokenizer should count against the window: system,
    messages (text and tool calls as JSON) and tool definitions."""
    import json

    parts = [text_of(body.get("system"))] if "system" in body else []
    for item in body.get("messages") or []:
        if isinstance(item, dict):
            parts.append(text_of(item.get("content")))
            extra = {k: v for k, v in item.items() if k in ("tool_calls", "content")}
            if not isinstance(item.get("content"), str) or "tool_calls" in item:
                parts.append(json.dumps(extra, ensure_ascii=False, default=str))
    if body.get("tools"):
        parts.append(json.dumps(body["tools"], ensure_ascii=False, default=str))
    return "\n".join(parts)
