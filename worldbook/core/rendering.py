"""Turning a :class:`~worldbook.core.types.Selection` into prompt text (DESIGN §2 rules 7 and 9).

The *stable* part (canon, then whole books) depends only on the books and the model's window,
never on the conversation, and is formatted deterministically, so it is byte-identical from
turn to turn and prompt caches (OpenAI's automatic prefix cache, Anthropic's ``cache_control``)
hit. The *lorebook slot* (classic activations, DESIGN §3: each its own message with its role,
its exact text) comes right after it: it changes less from turn to turn than the world's
per-turn lore (constants and sticky entries repeat), so it extends the cached prefix when it
repeats. The *per-turn* part (injected lore, then the world index) comes last, the index next to
the conversation. Tool-capable models get one constant tool definition, serialised once at
import time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from worldbook.core.living_tools import living_tools
from worldbook.core.types import (
    CLASSIC_VIAS,
    IndexLine,
    InjectedEntry,
    ModelProfile,
    Role,
    Selection,
    Via,
)

JSONDict = dict[str, Any]

LOOKUP_TOOL_NAME: Final = "lookup_lore"
"""The name the model calls; the service answers it with the entry's full lore."""

_LOOKUP_TOOL: Final[JSONDict] = {
    "name": LOOKUP_TOOL_NAME,
    "description": (
        "Read the full lore of a topic listed in the world index. "
        "Call it when the story needs details the index line does not give."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "description": "The topic's title exactly as written in the world index.",
            }
        },
        "required": ["title"],
        "additionalProperties": False,
    },
}

LOOKUP_TOOL_JSON: Final = json.dumps(
    _LOOKUP_TOOL, sort_keys=True, ensure_ascii=False, separators=(",", ":")
)
"""The tool definition's canonical bytes: every rendering derives from this one string."""

STABLE_HEADER: Final = "# World lore\nWhat follows is true in this story's world."
TURN_HEADER: Final = "# Lore for this turn"
INDEX_HEADER: Final = "# Other topics in this world"
INDEX_WITH_TOOL: Final = (
    f"These topics exist but are not shown in full. To read one, call the "
    f"{LOOKUP_TOOL_NAME} tool with its title."
)
INDEX_WITHOUT_TOOL: Final = (
    "These topics exist in this world; only a one-line summary of each is given here."
)


def lookup_tool() -> JSONDict:
    """A fresh copy of the neutral tool definition (``name``, ``description``, ``parameters``)."""
    tool: JSONDict = json.loads(LOOKUP_TOOL_JSON)
    return tool


def anthropic_tool(tool: JSONDict) -> JSONDict:
    """A neutral tool definition as the Anthropic Messages API takes it (``parameters`` is
    its ``input_schema``); for the prompt's tools and for an LLM request's alike."""
    return {
        "name": tool["name"],
        "description": tool["description"],
        "input_schema": tool["parameters"],
    }


def _label(character: str | None, group_chat: bool) -> str:
    return f" [From {character}'s world]" if group_chat and character else ""


def _entry_block(entry: InjectedEntry, group_chat: bool) -> str:
    title = entry.ref.title + _label(entry.ref.character, group_chat)
    return f"## {title}\n{entry.text}"


def _index_block(lines: tuple[IndexLine, ...], group_chat: bool, tools: bool) -> str:
    intro = INDEX_WITH_TOOL if tools else INDEX_WITHOUT_TOOL
    body = "\n".join(f"- {ln.line}{_label(ln.ref.character, group_chat)}" for ln in lines)
    return f"{INDEX_HEADER}\n{intro}\n{body}"


def _lore_message(entry: InjectedEntry, group_chat: bool) -> tuple[Role, str]:
    """A classic activation's message: its role and exact text (labelled in group chats)."""
    label = _label(entry.ref.character, group_chat).strip()
    return entry.role, f"{label}\n{entry.text}" if label else entry.text


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The two system texts of a turn, the lorebook slot between them (role, text per
    message), and whether the lookup tool is offered; with ``living_tools`` (the living world,
    ADR 0006) ``lore_create`` and ``lore_append`` too."""

    stable: str
    per_turn: str
    supports_tools: bool
    lorebook: tuple[tuple[Role, str], ...] = ()
    living_tools: bool = False

    @property
    def tools(self) -> list[JSONDict]:
        """The neutral tool definitions (empty without tool support)."""
        if not self.supports_tools:
            return []
        return [lookup_tool(), *(living_tools() if self.living_tools else [])]

    def openai_messages(self) -> list[dict[str, str]]:
        """Messages in OpenAI chat format: the stable system text, the lorebook slot (one
        message per classic entry, with its role), the per-turn system text; empty parts are
        left out."""
        out = [{"role": "system", "content": self.stable}] if self.stable else []
        out += [{"role": role, "content": text} for role, text in self.lorebook]
        if self.per_turn:
            out.append({"role": "system", "content": self.per_turn})
        return out

    def openai_tools(self) -> list[JSONDict]:
        """``tools`` for the OpenAI Chat Completions API (function tools)."""
        return [{"type": "function", "function": tool} for tool in self.tools]

    def anthropic(self) -> JSONDict:
        """``system`` blocks (the stable one marked for caching) and, with tool support,
        ``tools`` for the Anthropic Messages API. Empty blocks are left out (the API rejects
        them), and so is ``tools`` when there are none."""
        system: list[JSONDict] = []
        if self.stable:
            system.append(
                {"type": "text", "text": self.stable, "cache_control": {"type": "ephemeral"}}
            )
        system += [{"type": "text", "text": t} for role, t in self.lorebook if role == "system"]
        if self.per_turn:
            system.append({"type": "text", "text": self.per_turn})
        body: JSONDict = {"system": system}
        # Anthropic has no system messages inside the conversation: lorebook entries with a
        # user or assistant role are messages for the app to put at the head of its messages.
        spoken = [{"role": r, "content": t} for r, t in self.lorebook if r != "system"]
        if spoken:
            body["messages"] = spoken
        if self.supports_tools:
            body["tools"] = [anthropic_tool(t) for t in self.tools]
        return body


def render(selection: Selection, profile: ModelProfile | None = None) -> RenderedPrompt:
    """Render a selection. ``profile`` overrides the selection's tool support when given."""
    tools = profile.supports_tools if profile is not None else selection.supports_tools
    group = selection.group_chat
    stable_entries = [*selection.canon, *(e for e in selection.injected if e.via is Via.WHOLE_BOOK)]
    lorebook = tuple(_lore_message(e, group) for e in selection.injected if e.via in CLASSIC_VIAS)
    turn_entries = [
        e for e in selection.injected if e.via is not Via.WHOLE_BOOK and e.via not in CLASSIC_VIAS
    ]

    stable = ""
    if stable_entries:
        stable = "\n\n".join([STABLE_HEADER, *(_entry_block(e, group) for e in stable_entries)])
    parts: list[str] = []
    if turn_entries:
        parts.append("\n\n".join([TURN_HEADER, *(_entry_block(e, group) for e in turn_entries)]))
    if selection.index:
        parts.append(_index_block(selection.index, group, tools))
    return RenderedPrompt(
        stable=stable, per_turn="\n\n".join(parts), supports_tools=tools, lorebook=lorebook
    )
