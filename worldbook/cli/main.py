"""The ``worldbook`` command: serve, worker, import, export, select, preview, index, keys, bench.

Every command builds its settings here, at the entry point, and works on the database named by
``WORLDBOOK_DATABASE_URL`` (default: the embedded SQLite file) with no server running.
"""

from __future__ import annotations

from typing import Annotated

import typer

from worldbook.bench.cli import bench_command
from worldbook.cli.authoring import generate_command, split_command
from worldbook.cli.books import export_command, import_command, keys_app
from worldbook.cli.connections import connections_app
from worldbook.cli.context import handle_errors, settings
from worldbook.cli.index import index_command, worker_command
from worldbook.cli.turns import preview_command, select_command

app = typer.Typer(
    name="worldbook",
    help="A world-book engine: decides which lore reaches the model, and says why.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.command("serve")
@handle_errors
def serve_command(
    host: Annotated[str | None, typer.Option(help="Bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
    workers: Annotated[int, typer.Option(help="API processes.")] = 1,
) -> None:
    """Run the HTTP service (uvicorn). Embedded defaults need nothing else running."""
    import uvicorn

    current = settings()
    uvicorn.run(
        "worldbook.api.app:create_app",
        factory=True,
        host=host or current.host,
        port=port or current.port,
        workers=workers,
    )


app.command("import")(import_command)
app.command("export")(export_command)
app.command("select")(select_command)
app.command("preview")(preview_command)
app.command("index")(index_command)
app.command("worker")(worker_command)
app.add_typer(keys_app, name="keys")
app.command("bench")(bench_command)
app.command("generate")(generate_command)
app.command("split")(split_command)
app.add_typer(connections_app, name="connections")  # the proxy's (ADR 0017)


def main() -> None:
    app()


if __name__ == "__main__":  # python -m worldbook.cli.main
    main()
