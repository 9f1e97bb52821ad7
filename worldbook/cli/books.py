"""``worldbook import``, ``worldbook export`` and ``worldbook keys``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from worldbook.cli.context import emit_json, handle_errors, open_services, show_progress
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput
from worldbook.service.importing import ExportFormat, export, import_book

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Acting user (default: local).")]


@handle_errors
def import_command(
    file: Annotated[Path, typer.Argument(help="Lorebook file in any supported format.")],
    mode: Annotated[
        BookMode, typer.Option(help="world (default), classic (keys) or hybrid (world + keys).")
    ] = BookMode.WORLD,
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import a lorebook file as a new book, 500 entries per transaction; re-running the same
    command after an interruption resumes where it stopped."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"Cannot read {file}: {exc.strerror}.", field="file") from exc
    with open_services() as services, Progress(disable=not show_progress(), transient=True) as bar:
        task = bar.add_task(f"importing {file.name}", total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = import_book(
            services,
            owner_id=user or services.settings.cli_user,
            data=data,
            mode=mode,
            filename=file.name,
            single_batch=False,
            on_batch=advance,
        )
    if as_json:
        emit_json(result.to_json())
        return
    verb = "resumed and imported" if result.resumed else "imported"
    typer.echo(f"{verb} {result.entries} entries into {result.title!r} (book {result.book_id})")
    for warning in result.warnings:
        typer.echo(f"warning: {warning}")
    typer.echo(f"index it with: worldbook index --book {result.book_id} --wait")


@handle_errors
def export_command(
    book_id: Annotated[str, typer.Argument(help="The book to export.")],
    fmt: Annotated[str, typer.Option("--format", help="sillytavern or ccv3.")] = "sillytavern",
    out: Annotated[
        Path | None, typer.Option("--out", help="File to write (default: stdout).")
    ] = None,
    user: UserOpt = None,
) -> None:
    """Export a book as SillyTavern World Info JSON or a CCv3 lorebook_v3 JSON."""
    if fmt not in ("sillytavern", "ccv3"):
        raise InvalidInput("--format must be sillytavern or ccv3.", field="format")
    chosen: ExportFormat = "sillytavern" if fmt == "sillytavern" else "ccv3"
    with open_services() as services:
        data = export(
            services, user_id=user or services.settings.cli_user, book_id=book_id, fmt=chosen
        )
    if out is None:
        typer.echo(data.decode("utf-8"))
    else:
        out.write_bytes(data)


keys_app = typer.Typer(help="API keys of the calling apps (stored hashed).", no_args_is_help=True)


@keys_app.command("create")
@handle_errors
def keys_create(
    name: Annotated[str, typer.Argument(help="Which app the key is for.")],
    as_json: JsonOpt = False,
) -> None:
    """Create an API key; the secret is shown once."""
    with open_services() as services:
        record, secret = services.keys.create_api_key(name)
    if as_json:
        emit_json({"id": record.id, "name": record.name, "key": secret})
    else:
        typer.echo(f"key {record.id} for {record.name!r}: {secret}")
        typer.echo("Store it now: only its hash is kept.")


@keys_app.command("list")
@handle_errors
def keys_list(as_json: JsonOpt = False) -> None:
    """List API keys (never their secrets)."""
    with open_services() as services:
        records = services.keys.list_api_keys()
    rows = [
        {"id": r.id, "name": r.name, "prefix": r.prefix, "revoked": r.revoked_at is not None}
        for r in records
    ]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        state = "revoked" if row["revoked"] else "active"
        typer.echo(f"{row['id']}  {row['prefix']}…  {row['name']}  ({state})")


@keys_app.command("revoke")
@handle_errors
def keys_revoke(key_id: Annotated[str, typer.Argument(help="Key id from `keys list`.")]) -> None:
    """Revoke an API key; requests with it are refused from now on."""
    with open_services() as services:
        services.keys.revoke_api_key(key_id)
    typer.echo(f"revoked {key_id}")
