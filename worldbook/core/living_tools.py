"""The living world's two tools, ``lore_create`` and ``lore_append`` (ADR 0006).

Like ``lookup_lore`` (:mod:`worldbook.core.rendering`), each definition is one constant whose
canonical bytes are computed once at import: every turn that offers them sends the same bytes
in the OpenAI and the Anthropic renderings, so prompt caches keep hitting. The schemas are
minimal on purpose — no book id, no entry list: an unused ``lorebookId`` parameter made
Aventuras' model invent ``"lorebook_1"`` (docs/ai-authoring.md §1). The app forwards each call
to ``POST /v1/writes`` with the book the selection named (``living_world.book_id``).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

JSONDict = dict[str, Any]

LORE_CREATE: Final = "lore_create"
LORE_APPEND: Final = "lore_append"
WriteTool = Literal["lore_create", "lore_append"]
WRITE_TOOLS: Final[tuple[WriteTool, ...]] = (LORE_CREATE, LORE_APPEND)

_CREATE_TOOL: Final[JSONDict] = {
    "name": LORE_CREATE,
    "description": (
        "Record a lasting fact the story just established about a topic the world's lore does "
        "not cover yet (a place, person, group, object or event). Write plain prose that names "
        "the topic. If the topic already exists, the lore is added to it instead."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "description": "The topic's name: a short noun phrase (2 to 100 characters).",
            },
            "lore": {
                "type": "string",
                "description": "What is true about the topic, as plain prose (20 characters "
                "or more).",
            },
            "aliases": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Other names the topic goes by, if any.",
            },
        },
        "required": ["title", "lore"],
        "additionalProperties": False,
    },
}

_APPEND_TOOL: Final[JSONDict] = {
    "name": LORE_APPEND,
    "description": (
        "Add a new lasting fact to a topic that is already in the world's lore. The text is "
        "added after what the topic says; nothing is replaced. Skip facts the lore already "
        "states."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "title": {
                "type": "string",
                "description": "The topic's title (or another of its names) as the lore writes it.",
            },
            "entry_id": {
                "type": "string",
                "description": "The topic's id, instead of its title, when you know it.",
            },
            "text": {
                "type": "string",
                "description": "The new fact or facts, as plain prose.",
            },
        },
        "required": ["text"],
        "additionalProperties": False,
    },
}


def _canonical(tool: JSONDict) -> str:
    return json.dumps(tool, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


LORE_CREATE_TOOL_JSON: Final = _canonical(_CREATE_TOOL)
"""``lore_create``'s canonical bytes: every rendering derives from this one string."""
LORE_APPEND_TOOL_JSON: Final = _canonical(_APPEND_TOOL)
"""``lore_append``'s canonical bytes."""


def living_tools() -> list[JSONDict]:
    """Fresh copies of both neutral tool definitions (``name``, ``description``,
    ``parameters``), create first."""
    return [json.loads(LORE_CREATE_TOOL_JSON), json.loads(LORE_APPEND_TOOL_JSON)]
