"""``worldbook db copy`` and ``worldbook db backup``: grow from the embedded SQLite file to
PostgreSQL (or back), and back the SQLite file up while the server runs (ADR 0018)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from worldbook.adapters.store.copy import backup_sqlite, copy_database
from worldbook.cli.context import emit_json, handle_errors, settings
from worldbook.errors import Conflict

db_app = typer.Typer(
    help="Copy the database to another one (SQLite <-> PostgreSQL), or back up SQLite.",
    no_args_is_help=True,
)


@db_app.command("copy")
@handle_errors
def copy_command(
    to: Annotated[str, typer.Option("--to", help="The target database URL.")],
    source: Annotated[
        str | None,
        typer.Option("--from", help="The source database URL (default: the configured one)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Copy every table to --to, then compare row counts and checksums table by table.

    Stop the servers writing to the source first (or copy again afterwards: a second run
    brings the target up to date). Interrupted, run it again: nothing is duplicated.
    """
    current = settings()
    from_url = source or current.resolved_database_url()
    to_url = type(current)(database_url=to).resolved_database_url()  # postgres:// accepted
    checks = copy_database(from_url, to_url)
    report = {
        c.table: {"rows": c.source_rows, "target_rows": c.target_rows, "same": c.same}
        for c in checks
    }
    if as_json:
        emit_json({"tables": report, "same": all(c.same for c in checks)})
    else:
        for c in checks:
            mark = "ok" if c.same else "DIFFERS"
            typer.echo(f"{c.table:<20} {c.source_rows:>9} -> {c.target_rows:>9}  {mark}")
    bad = [c.table for c in checks if not c.same]
    if bad:
        raise Conflict(
            f"the target differs from the source in {', '.join(bad)}: was the source written "
            "during the copy, or does the target hold other data? Run the copy again.",
            field="to",
        )


@db_app.command("backup")
@handle_errors
def backup_command(
    out: Annotated[Path, typer.Option("--out", help="The backup file to write (new).")],
) -> None:
    """A consistent copy of the SQLite database, safe while the server runs.

    SQLite's online backup API; for PostgreSQL use pg_dump (README, 'Operating worldbook').
    """
    size = backup_sqlite(settings().resolved_database_url(), out)
    typer.echo(f"backed up to {out} ({size:,} bytes)")
