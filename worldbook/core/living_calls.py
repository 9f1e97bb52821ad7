"""Parsing a living-world tool call (ADR 0006): the arguments as the model sent them
(a JSON object, or OpenAI's JSON text) checked against the tool's schema and the DESIGN §6
limits, into a :class:`~worldbook.core.living.WriteCall`. Nothing is written on failure and
every error names ``arguments.<field>``, so the app can hand it back to the model."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from worldbook.core import limits as lim
from worldbook.core.drafts import EntryDraft
from worldbook.core.living import WriteCall
from worldbook.core.living_tools import LORE_APPEND, LORE_CREATE, WRITE_TOOLS
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput

_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_WORD = re.compile(r"\w", re.UNICODE)


@dataclass(frozen=True, slots=True)
class CallContext:
    """Where a call comes from: the book and the chat message (validated by the API). Every
    field is a :class:`WriteCall` field of the same name (the call carries its context)."""

    book_id: str
    chat_id: str
    message_id: str
    call_id: str
    swipe: int | None = None
    mode: BookMode = BookMode.WORLD


def parse_arguments(arguments: object) -> dict[str, Any]:
    """A tool call's arguments: a JSON object, or its JSON text (OpenAI sends text)."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError as exc:
            raise InvalidInput(
                "arguments must be a JSON object (the tool call's arguments); got text that "
                "is not JSON.",
                field="arguments",
            ) from exc
    if not isinstance(value, dict):
        raise InvalidInput("arguments must be a JSON object.", field="arguments")
    return value


def _known(args: Mapping[str, Any], allowed: tuple[str, ...], tool: str) -> None:
    unknown = sorted(set(args) - set(allowed))
    if unknown:
        raise InvalidInput(
            f"{tool} takes {', '.join(allowed)}; remove {unknown[0]!r}.",
            field=f"arguments.{unknown[0]}",
        )


def parse_call(ctx: CallContext, tool: str, arguments: object) -> WriteCall:
    """Validate a tool call against its schema and the DESIGN §6 limits (nothing is written
    on failure; every error names ``arguments.<field>``)."""
    if tool not in WRITE_TOOLS:
        raise InvalidInput(f"tool must be one of {', '.join(WRITE_TOOLS)}.", field="tool")
    args = parse_arguments(arguments)
    if tool == LORE_CREATE:
        _known(args, ("title", "lore", "aliases"), tool)
        draft = create_draft(args.get("title"), args.get("lore"), args.get("aliases", []))
        lim.validate_entry_draft(draft, field="arguments", mode=ctx.mode)
        aliases = tuple(draft.aliases)
        return WriteCall(
            **asdict(ctx), tool=LORE_CREATE, text=draft.lore, title=draft.title, aliases=aliases
        )
    _known(args, ("title", "entry_id", "text"), tool)
    title, entry_id = args.get("title"), args.get("entry_id")
    if (title is None) == (entry_id is None):
        raise InvalidInput(
            "lore_append needs exactly one of title or entry_id.", field="arguments.title"
        )
    if entry_id is not None and (not isinstance(entry_id, str) or not _ID.match(entry_id)):
        raise InvalidInput("arguments.entry_id is not an entry id.", field="arguments.entry_id")
    if title is not None:
        title = lim.check_text(
            title, field="arguments.title", limit="alias", max_len=lim.LIMITS.alias_max
        ).strip()
    text = check_segment(args.get("text"), field="arguments.text")
    return WriteCall(**asdict(ctx), tool=LORE_APPEND, text=text, title=title, entry_id=entry_id)


def create_draft(title: object, lore: object, aliases: object) -> EntryDraft:
    """The entry a create would add (whitespace trimmed; validated by the caller)."""
    for name, value in (("title", title), ("lore", lore)):
        if not isinstance(value, str):
            raise InvalidInput(f"arguments.{name} must be text.", field=f"arguments.{name}")
    assert isinstance(title, str) and isinstance(lore, str)
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise InvalidInput("arguments.aliases must be a list of text.", field="arguments.aliases")
    kept = list(dict.fromkeys(" ".join(a.split()) for a in aliases if a.strip()))
    return EntryDraft(title=" ".join(title.split()), lore=lore.strip(), aliases=kept)


def check_segment(text: object, *, field: str) -> str:
    """Appended text: clean, not blank, with a letter or digit, within the lore maximum."""
    checked = lim.check_text(
        text, field=field, limit="appended text", max_len=lim.LIMITS.lore_max, blank_ok=False
    ).strip()
    if not _WORD.search(checked):
        raise InvalidInput(f"{field} must say something (letters or digits).", field=field)
    return checked
