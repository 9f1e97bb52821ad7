"""The ``worldbook`` command and its sub-commands, each loaded only when it runs.

Every command builds its settings at the entry point, when it runs, and works on the database
named by ``WORLDBOOK_DATABASE_URL`` (default: the embedded SQLite file) with no server running.

Commands load lazily (ADR 0019): this module imports only Typer, so ``worldbook --help`` stays
under 200 modules. Register a command or a group of commands with one line in ``COMMANDS``:
its name, ``module:attribute`` (a function or a ``typer.Typer``) and its one-line help.
"""

from __future__ import annotations

import typer

from worldbook.cli.lazy import LazyCommand, lazy_group

COMMANDS = (
    LazyCommand("serve", "worldbook.cli.serve:serve_command", "Run the HTTP service (uvicorn)."),
    LazyCommand("import", "worldbook.cli.books:import_command", "Import a lorebook file."),
    LazyCommand("export", "worldbook.cli.books:export_command", "Export a book."),
    LazyCommand("select", "worldbook.cli.selection:select_command", "Decide the lore of one turn."),
    LazyCommand("preview", "worldbook.cli.selection:preview_command", "Preview a turn (no usage)."),
    LazyCommand("index", "worldbook.cli.index:index_command", "Index entries."),
    LazyCommand("worker", "worldbook.cli.index:worker_command", "Start a Celery worker."),
    LazyCommand("keys", "worldbook.cli.books:keys_app", "API keys of the calling apps."),
    LazyCommand("bench", "worldbook.cli.bench:bench_command", "Benchmark quality and speed."),
    LazyCommand("generate", "worldbook.cli.authoring:generate_command", "Draft a world book."),
    LazyCommand("split", "worldbook.cli.authoring:split_command", "Split a text into entries."),
    LazyCommand("db", "worldbook.cli.db:db_app", "Copy or back up the database."),
    LazyCommand("connections", "worldbook.cli.connections:connections_app", "Connect an app."),
    LazyCommand("glosses", "worldbook.cli.glosses:glosses_app", "Names in readers' languages."),
)

app = typer.Typer(
    name="worldbook",
    help="A world-book engine: decides which lore reaches the model, and says why.",
    cls=lazy_group(COMMANDS),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@app.callback()
def _group() -> None:
    """Every command is registered lazily in ``COMMANDS``; Typer needs a callback to build a
    group with no eagerly registered command."""


def main() -> None:
    app()


if __name__ == "__main__":  # python -m worldbook.cli.main
    main()
