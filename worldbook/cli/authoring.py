"""``worldbook generate`` and ``worldbook split``: AI authoring from the command line.

Both print worldbook's draft JSON with ``--json``, which ``worldbook import`` reads back::

    worldbook generate --premise "A drowned pirate city" --json > book.json
    worldbook import book.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from worldbook.adapters.formats.jsontext import decode_text
from worldbook.adapters.llm import build_llm, close_llm
from worldbook.cli.context import emit_json, handle_errors, open_services, settings
from worldbook.core.drafts import EntryDraft
from worldbook.core.limits import LIMITS
from worldbook.errors import InvalidInput, PayloadTooLarge
from worldbook.llm_port import LLM
from worldbook.service import library
from worldbook.service.generate import COUNT_DEFAULT, generate_book
from worldbook.service.split_text import SplitOutcome, split_into_entries

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Acting user (default: local).")]
SeedOpt = Annotated[int | None, typer.Option(help="Repeatable sampling, where supported.")]
_READ_MAX = LIMITS.split_text_max * 4 + 4  # UTF-8 bytes of the longest text we accept


@handle_errors
def generate_command(
    premise: Annotated[str, typer.Option(help="What the world is about.")],
    count: Annotated[int, typer.Option(help="Entries to write, 4–16.")] = COUNT_DEFAULT,
    language: Annotated[str | None, typer.Option(help="Write the book in this language.")] = None,
    seed: SeedOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a draft world book with the configured language model (WORLDBOOK_LLM_URL);
    nothing is saved: save the --json output and run `worldbook import` on it."""
    llm = build_llm(settings())
    try:
        book = generate_book(llm, premise, count=count, language=language, seed=seed)
    finally:
        close_llm(llm)
    if as_json:
        emit_json(book.to_json())
        return
    typer.echo(f"{book.title} — {book.description}")
    for entry in book.entries:
        aliases = f" ({', '.join(entry.aliases)})" if entry.aliases else ""
        typer.echo(f"\n## {entry.title}{aliases}{' [canon]' if entry.canon else ''}\n{entry.lore}")
    for warning in book.warnings:
        typer.echo(f"warning: {warning}", err=True)


def _read_text(file: Path) -> str:
    try:
        with file.open("rb") as handle:
            data = handle.read(_READ_MAX + 1)
    except OSError as exc:
        raise InvalidInput(f"Cannot read {file}: {exc.strerror}.", field="file") from exc
    if len(data) > _READ_MAX:
        raise PayloadTooLarge(
            limit="text to split into entries",
            allowed=f"at most {LIMITS.split_text_max:,} characters",
            actual=f"more than {_READ_MAX:,} bytes",
            field="file",
        )
    return decode_text(data)


@handle_errors
def split_command(
    file: Annotated[Path, typer.Argument(help="A UTF-8 text file (≤ 40,000 characters).")],
    book: Annotated[str | None, typer.Option("--book", help="The book to add to.")] = None,
    save: Annotated[bool, typer.Option("--save", help="Add the entries to --book.")] = False,
    no_llm: Annotated[
        bool, typer.Option("--no-llm", help="Cut by headings and paragraphs only.")
    ] = False,
    seed: SeedOpt = None,
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Split a text into entries whose lore is the text word for word (a dry run unless
    --save). Uses the configured language model for titles and ranges, else headings."""
    if save and book is None:
        raise InvalidInput("--save needs --book ID (the book to add the entries to).", field="book")
    text = _read_text(file)
    llm = None if no_llm else build_llm(settings())
    try:
        _split(text, book, save, llm, seed, user, as_json)
    finally:
        close_llm(llm)


def _split(
    text: str,
    book: str | None,
    save: bool,
    llm: LLM | None,
    seed: int | None,
    user: str | None,
    as_json: bool,
) -> None:
    if book is None:
        _print(split_into_entries(text, llm=llm, seed=seed), as_json)
        return
    with open_services() as services:
        acting = user or services.settings.cli_user
        record = library.owned_book(services, acting, book)

        def add(drafts: list[EntryDraft]) -> list[str]:
            return [e.id for e in library.add_entries(services, acting, book, drafts)]

        outcome = split_into_entries(
            text, llm=llm, add_entries=add if save else None, mode=record.mode, seed=seed
        )
    _print(outcome, as_json)
    if save and not as_json:
        typer.echo(f"index them with: worldbook index --book {book} --wait")


def _print(outcome: SplitOutcome, as_json: bool) -> None:
    if as_json:
        emit_json(outcome.to_json())
        return
    verb = "added" if outcome.entry_ids is not None else "would add"
    typer.echo(f"{verb} {len(outcome.split.parts)} entries (split by {outcome.method}):")
    for part in outcome.split.parts:
        typer.echo(f"- {part.title} ({len(part.lore):,} characters)")
    for warning in outcome.warnings:
        typer.echo(f"warning: {warning}", err=True)
