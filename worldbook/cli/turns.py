"""``worldbook select`` and ``worldbook preview``: one turn against the local database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from worldbook.cli.context import emit_json, handle_errors, open_services
from worldbook.core.profiles import resolve_profile
from worldbook.core.types import Message, ModelProfile
from worldbook.errors import InvalidInput
from worldbook.service.turns import BookSource, CastMember, TurnResult, preview, select_turn
from worldbook.settings import WorldbookSettings

BookOpt = Annotated[list[str], typer.Option("--book", help="Book id (repeatable, in order).")]
CharacterOpt = Annotated[
    list[str],
    typer.Option("--character", help="Cast member as ID or ID:NAME (repeatable, cast order)."),
]
StoryOpt = Annotated[str | None, typer.Option("--story", help="Story id whose books to use.")]
NovelOpt = Annotated[str | None, typer.Option("--novel", help="Novel id whose books to use.")]
WindowOpt = Annotated[int | None, typer.Option("--window", help="Model input window (tokens).")]
ModelOpt = Annotated[str | None, typer.Option("--model", help="Known model name (profile).")]
TokenizerOpt = Annotated[str | None, typer.Option("--tokenizer", help="Tokenizer id.")]
ToolsOpt = Annotated[bool, typer.Option("--tools", help="The model can call tools.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Acting user (default: local).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _source(books: list[str], story: str | None, novel: str | None, chars: list[str]) -> BookSource:
    cast = []
    for spec in chars:
        character_id, _, name = spec.partition(":")
        cast.append(CastMember(character_id=character_id, name=name or None))
    return BookSource(book_ids=tuple(books), story_id=story, novel_id=novel, characters=tuple(cast))


def _profile(
    settings: WorldbookSettings,
    model: str | None,
    window: int | None,
    tokenizer: str | None,
    tools: bool,
) -> ModelProfile:
    return resolve_profile(
        model,
        input_window=window,
        tokenizer=tokenizer,
        supports_tools=True if tools else None,
        default_window=settings.default_input_window,
        default_tokenizer=settings.tokenizer,
    )


def read_messages(path: Path) -> list[Message]:
    """A JSON list of ``{"role", "name"?, "content"}``, newest last."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"Cannot read messages from {path}: {exc}.", field="messages") from exc
    if not isinstance(raw, list):
        raise InvalidInput("The messages file must hold a JSON list.", field="messages")
    messages = []
    for i, item in enumerate(raw):
        where = f"messages[{i}]"
        if not isinstance(item, dict):
            raise InvalidInput(f"{where} must be an object.", field=where)
        role, content, name = item.get("role"), item.get("content"), item.get("name")
        if role not in ("user", "assistant", "system"):
            raise InvalidInput(f"{where}.role must be user, assistant or system.", field=where)
        if not isinstance(content, str):
            raise InvalidInput(f"{where}.content must be a string.", field=f"{where}.content")
        if name is not None and not isinstance(name, str):
            raise InvalidInput(f"{where}.name must be a string.", field=f"{where}.name")
        messages.append(Message(role=role, content=content, name=name))
    return messages


def _print(result: TurnResult, as_json: bool) -> None:
    if as_json:
        emit_json(result.to_json())
        return
    body = result.to_json()
    canon = body["canon"]
    assert isinstance(canon, dict)
    typer.echo(
        f"Canon: {canon['tokens']}/{canon['budget']} tokens, {len(canon['entries'])} entries"
    )
    if canon["over_budget"]:
        typer.echo(f"  over budget: {', '.join(e['title'] for e in canon['over_budget'])}")
    for item in body["injected"]:  # type: ignore[attr-defined]
        cut = " (cut)" if item["truncated"] else ""
        typer.echo(f"  in full [{item['via']}] {item['title']} — {item['tokens']} tokens{cut}")
    for item in body["index"]:  # type: ignore[attr-defined]
        typer.echo(f"  index{' (linked)' if item['linked'] else ''}: {item['line']}")
    for note in body.get("notes", []):  # type: ignore[attr-defined]
        typer.echo(f"note: {note}")


@handle_errors
def select_command(
    messages: Annotated[Path, typer.Option("--messages", help="JSON file of messages.")],
    book: BookOpt = [],  # noqa: B006 - typer reads the default, never mutates it
    character: CharacterOpt = [],  # noqa: B006
    story: StoryOpt = None,
    novel: NovelOpt = None,
    window: WindowOpt = None,
    model: ModelOpt = None,
    tokenizer: TokenizerOpt = None,
    tools: ToolsOpt = False,
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Decide the lore of one turn (counts as usage)."""
    with open_services() as services:
        result = select_turn(
            services,
            user_id=user or services.settings.cli_user,
            source=_source(book, story, novel, character),
            messages=read_messages(messages),
            profile=_profile(services.settings, model, window, tokenizer, tools),
        )
        _print(result, as_json)


@handle_errors
def preview_command(
    message: Annotated[str, typer.Option("--message", help="Sample user message (≤2,000).")],
    book: BookOpt = [],  # noqa: B006
    character: CharacterOpt = [],  # noqa: B006
    story: StoryOpt = None,
    novel: NovelOpt = None,
    window: WindowOpt = None,
    model: ModelOpt = None,
    tokenizer: TokenizerOpt = None,
    tools: ToolsOpt = False,
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what a turn with this message would select (not counted as usage)."""
    with open_services() as services:
        result = preview(
            services,
            user_id=user or services.settings.cli_user,
            source=_source(book, story, novel, character),
            message=message,
            profile=_profile(services.settings, model, window, tokenizer, tools),
        )
        _print(result, as_json)
