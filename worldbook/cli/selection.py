"""``worldbook select`` and ``worldbook preview``: one turn against the local database.

Options become the service's typed request (``worldbook.service.contract``), validated there
exactly as the HTTP API validates its bodies; the answer is printed from the typed response.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from worldbook.cli.context import emit_json, handle_errors, open_services
from worldbook.errors import InvalidInput
from worldbook.service.contract import (
    PreviewRequest,
    SelectionOut,
    SelectRequest,
    TraceLevel,
    run_preview,
    run_select,
)
from worldbook.service.request_log import explain_lines
from worldbook.service.services import Services
from worldbook.service.turns import TurnResult

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
UserNameOpt = Annotated[
    str | None, typer.Option("--user-name", help="The user's name in the chat ({{user}}).")
]
ChatOpt = Annotated[str | None, typer.Option("--chat", help="Chat id (classic chat state).")]
TraceOpt = Annotated[str, typer.Option("--trace", help="full or summary.")]
ExplainOpt = Annotated[
    bool,
    typer.Option(
        "--explain",
        help="Print what went in and why (the chat's request log of this turn), then every "
        "entry's fate.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _request_fields(
    books: list[str],
    story: str | None,
    novel: str | None,
    chars: list[str],
    model: dict[str, Any],
) -> dict[str, Any]:
    cast = []
    for spec in chars:
        character_id, _, name = spec.partition(":")
        cast.append({"id": character_id, "name": name or None})
    fields = {"book_ids": books, "story_id": story, "novel_id": novel, "characters": cast}
    return {**fields, **{k: v for k, v in model.items() if v is not None}}


def _turn_options(
    model: str | None,
    window: int | None,
    tokenizer: str | None,
    tools: bool,
    user_name: str | None,
    trace: str,
) -> dict[str, Any]:
    """The options ``select`` and ``preview`` share, as request fields (None = not sent)."""
    return {
        "model": model,
        "input_window": window,
        "tokenizer": tokenizer,
        "trace": trace,
        "supports_tools": True if tools else None,
        "user_name": user_name,
    }


def _validated(model: type[SelectRequest] | type[PreviewRequest], fields: dict[str, Any]) -> Any:
    """The typed request, or the first problem as the CLI's one-line error."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "request"
        raise InvalidInput(f"{where}: {first['msg']}.", field=where) from None


def read_messages(path: Path) -> list[Any]:
    """A JSON list of ``{"role", "name"?, "content"}``, newest last (validated by the request)."""
    try:
        raw: Any = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"Cannot read messages from {path}: {exc}.", field="messages") from exc
    if not isinstance(raw, list):
        raise InvalidInput("The messages file must hold a JSON list.", field="messages")
    return raw


def _print(result: TurnResult, as_json: bool, trace: TraceLevel, explain: bool) -> None:
    body = result.to_json(trace=trace)
    if as_json:
        emit_json(body)
        return
    out = SelectionOut.model_validate(body)
    typer.echo(
        f"Canon: {out.canon.tokens}/{out.canon.budget} tokens, {len(out.canon.entries)} entries"
    )
    if out.canon.over_budget:
        typer.echo(f"  over budget: {', '.join(e.title for e in out.canon.over_budget)}")
    for item in out.injected:
        cut = " (cut)" if item.truncated else ""
        typer.echo(f"  in full [{item.via}] {item.title} — {item.cost} tokens{cut}")
    for line in out.index:
        typer.echo(f"  index{' (linked)' if line.linked else ''}: {line.line}")
    for note in out.notes:
        typer.echo(f"note: {note}")
    if explain:
        typer.echo("request log:")
        for text in explain_lines(result.log_record()):
            typer.echo(f"  {text}")
        typer.echo("every entry:")
        for record in out.trace:
            typer.echo(f"  {record.decision:<8} {record.title}: {record.reason}")


def _answer(
    run: Callable[[Services, str, Any], TurnResult],
    body: SelectRequest | PreviewRequest,
    user: str | None,
    as_json: bool,
    explain: bool,
) -> None:
    """Run the turn as ``user`` (default: the CLI's user) and print its answer."""
    with open_services() as services:
        result = run(services, user or services.settings.cli_user, body)
        _print(result, as_json, body.trace, explain)


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
    user_name: UserNameOpt = None,
    chat: ChatOpt = None,
    trace: TraceOpt = "full",
    explain: ExplainOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Decide the lore of one turn (counts as usage)."""
    extra = _turn_options(model, window, tokenizer, tools, user_name, trace) | {"chat_id": chat}
    fields = _request_fields(book, story, novel, character, extra)
    body: SelectRequest = _validated(SelectRequest, {**fields, "messages": read_messages(messages)})
    _answer(run_select, body, user, as_json, explain)


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
    user_name: UserNameOpt = None,
    trace: TraceOpt = "full",
    explain: ExplainOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Show what a turn with this message would select (not counted as usage)."""
    extra = _turn_options(model, window, tokenizer, tools, user_name, trace)
    fields = _request_fields(book, story, novel, character, extra)
    body: PreviewRequest = _validated(PreviewRequest, {**fields, "message": message})
    _answer(run_preview, body, user, as_json, explain)
