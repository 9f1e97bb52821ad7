"""``worldbook glosses``: names and gists of a book's entries in its readers' languages, written
by the configured language model (ADR 0023), from the command line.

``write`` runs the job in this process and waits (the server and the Celery worker run it after
indexing by themselves); ``list`` shows what is stored, marked as generated; ``delete`` drops
them with their vectors.
"""

from __future__ import annotations

from typing import Annotated

import typer

from worldbook.cli.context import emit_json, handle_errors, open_services
from worldbook.service import gloss_books
from worldbook.service.glosses import write_book_glosses
from worldbook.service.library import owned_book
from worldbook.service.llm_replies import not_configured

glosses_app = typer.Typer(
    help="Entries' names and gists in the readers' languages, written by the app's model.",
    no_args_is_help=True,
)
BookOpt = Annotated[str, typer.Option("--book", help="The book's id.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Acting user (default: local).")]


@glosses_app.command("write")
@handle_errors
def write(
    book: BookOpt,
    max_calls: Annotated[
        int | None, typer.Option(min=1, help="Ask the model at most this many times.")
    ] = None,
    embed_only: Annotated[
        bool, typer.Option(help="Only embed stored glosses that lack vectors (no model calls).")
    ] = False,
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write the glosses the book lacks (in its settings.reader_languages) and embed them."""
    from worldbook.adapters.llm import build_llm

    with open_services() as services:
        current = services.settings
        record = owned_book(services, user or current.cli_user, book)
        llm = None
        if not embed_only:
            llm = build_llm(current) if current.glosses else None
            if llm is None:
                raise not_configured("writing glosses (or pass --embed-only)")
        report = write_book_glosses(
            record.id,
            store=services.store,
            llm=llm,
            embedder=services.embedder,
            model=current.llm_model or current.llm_url or "",
            max_calls=max_calls,
        )
    if as_json:
        emit_json({"book_id": record.id, **report.as_dict()})
        return
    typer.echo(
        f"book {record.id}: {report.asked} model calls, {report.written} glosses written, "
        f"{report.embedded} embedded, {report.failed} calls failed"
    )
    for reason, count in sorted(report.dropped.items()):
        typer.echo(f"  dropped {count}: {reason}")


@glosses_app.command("list")
@handle_errors
def list_(book: BookOpt, user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """The book's current glosses (generated: never exported, never shown as lore)."""
    with open_services() as services:
        found = gloss_books.list_glosses(services, user or services.settings.cli_user, book)
    rows = [
        {"entry_id": g.entry_id, "entry_title": found.titles.get(g.entry_id, "")}
        | {"language": g.language, "name": g.name, "gist": g.gist}
        | {"model": g.model, "generated": True}
        for g in found.glosses
    ]
    if as_json:
        emit_json(
            {"book_id": found.book_id, "reader_languages": list(found.reader_languages)}
            | {"glosses": rows}
        )
        return
    typer.echo(f"book {found.book_id}: readers {', '.join(found.reader_languages) or '(none)'}")
    for g in found.glosses:
        title = found.titles.get(g.entry_id, "")
        typer.echo(f"  {g.entry_id} ({title}) [{g.language}] {g.name}: {g.gist}")


@glosses_app.command("delete")
@handle_errors
def delete(
    book: BookOpt,
    language: Annotated[
        list[str] | None, typer.Option(help="Only this language (repeatable).")
    ] = None,
    user: UserOpt = None,
) -> None:
    """Delete the book's glosses and their vectors."""
    with open_services() as services:
        user_id = user or services.settings.cli_user
        gone = gloss_books.delete_glosses(services, user_id, book, language)
    typer.echo(f"deleted {gone} glosses")
