"""``worldbook connections``: the proxy's connections (ADR 0017) from the command line.

A connection's token is what a frontend takes as its API key; the base URL is this server's
``/openai/v1`` or ``/anthropic/v1``. The upstream key is read from ``--upstream-key`` or, to
keep it out of shell history, from ``WORLDBOOK_UPSTREAM_KEY``.
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

import typer

from worldbook.cli.context import emit_json, handle_errors, open_services, settings
from worldbook.core.connections import ConnectionRecord, ConnectionSpec
from worldbook.service.connections import create_connection

connections_app = typer.Typer(
    help="Proxy connections: a token a chat app pastes as its API key (ADR 0017).",
    no_args_is_help=True,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
UserOpt = Annotated[str | None, typer.Option("--user", help="Acting user (default: local).")]


def _row(record: ConnectionRecord) -> dict[str, object]:
    spec = record.spec
    return {
        "id": record.id,
        "name": spec.name,
        "prefix": record.prefix,
        "upstream_kind": spec.upstream_kind,
        "upstream_url": spec.upstream_url,
        "upstream_model": spec.upstream_model,
        "has_upstream_key": record.has_upstream_key,
        "book_ids": list(spec.book_ids),
        "revoked": record.revoked_at is not None,
    }


def _show(record: ConnectionRecord, token: str, as_json: bool) -> None:
    current = settings()
    base = f"http://{current.host}:{current.port}/{record.spec.upstream_kind}/v1"
    if as_json:
        emit_json({**_row(record), "token": token, "base_url": base})
        return
    typer.echo(f"connection {record.id} ({record.spec.name!r})")
    typer.echo(f"  base URL: {base}")
    typer.echo(f"  API key:  {token}")
    typer.echo(f"  model:    {record.spec.upstream_model or '(the model your app names)'}")
    typer.echo("Store the key now: only its hash is kept.")


@connections_app.command("create")
@handle_errors
def create(
    name: Annotated[str, typer.Argument(help="Which app the connection is for.")],
    upstream_url: Annotated[str, typer.Option(help="The model's base URL (…/v1).")],
    book: Annotated[list[str] | None, typer.Option(help="A book id (repeatable).")] = None,
    story: Annotated[str | None, typer.Option(help="A story whose books apply.")] = None,
    character: Annotated[str | None, typer.Option(help="A character whose books apply.")] = None,
    char_name: Annotated[str | None, typer.Option(help="Fills {{char}}.")] = None,
    user_name: Annotated[str | None, typer.Option(help="Fills {{user}}.")] = None,
    kind: Annotated[
        Literal["openai", "anthropic"], typer.Option(help="The upstream's protocol.")
    ] = "openai",
    model: Annotated[str | None, typer.Option(help="Fix the upstream model.")] = None,
    upstream_key: Annotated[str | None, typer.Option(help="Or WORLDBOOK_UPSTREAM_KEY.")] = None,
    window: Annotated[int, typer.Option(help="The model's input window (tokens).")] = 8192,
    tokenizer: Annotated[str, typer.Option(help="The model's tokenizer.")] = "cl100k_base",
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a connection; its token is shown once."""
    spec = ConnectionSpec(
        name=name,
        upstream_kind=kind,
        upstream_url=upstream_url,
        upstream_model=model,
        book_ids=tuple(book or ()),
        story_id=story,
        character_id=character,
        char_name=char_name,
        user_name=user_name,
        input_window=window,
        tokenizer=tokenizer,
    )
    key = upstream_key or os.environ.get("WORLDBOOK_UPSTREAM_KEY") or None
    with open_services() as services:
        owner = user or services.settings.cli_user
        record, token = create_connection(services, owner, spec, key)
    _show(record, token, as_json)


@connections_app.command("list")
@handle_errors
def list_command(user: UserOpt = None, as_json: JsonOpt = False) -> None:
    """The user's connections (never a token or an upstream key)."""
    with open_services() as services:
        records = services.store.list_connections(user or services.settings.cli_user)
    rows = [_row(r) for r in records]
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        state = "revoked" if row["revoked"] else "active"
        typer.echo(f"{row['id']}  {row['prefix']}…  {row['name']}  {row['upstream_url']} ({state})")


@connections_app.command("rotate")
@handle_errors
def rotate(
    connection_id: Annotated[str, typer.Argument(help="From `connections list`.")],
    user: UserOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A new token; the old one stops working now."""
    with open_services() as services:
        owner = user or services.settings.cli_user
        record, token = services.store.rotate_connection(owner, connection_id)
    _show(record, token, as_json)


@connections_app.command("revoke")
@handle_errors
def revoke(
    connection_id: Annotated[str, typer.Argument(help="From `connections list`.")],
    user: UserOpt = None,
) -> None:
    """Revoke a connection; its token opens nothing from now on."""
    with open_services() as services:
        services.store.revoke_connection(user or services.settings.cli_user, connection_id)
    typer.echo(f"revoked {connection_id}")
