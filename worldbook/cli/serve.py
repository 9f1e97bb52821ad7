"""``worldbook serve``: the HTTP service under uvicorn."""

from __future__ import annotations

from typing import Annotated

import typer

from worldbook.cli.context import handle_errors, settings


@handle_errors
def serve_command(
    host: Annotated[str | None, typer.Option(help="Bind address.")] = None,
    port: Annotated[int | None, typer.Option(help="Port.")] = None,
    workers: Annotated[int, typer.Option(help="API processes.")] = 1,
) -> None:
    """Run the HTTP service (uvicorn). Embedded defaults need nothing else running."""
    import uvicorn

    from worldbook.runtime.metrics_dir import prepare as prepare_metrics_dir

    current = settings()
    # Before uvicorn starts its processes: they all write metrics to this run's directory.
    prepare_metrics_dir(current.data_dir, "serve")
    uvicorn.run(
        "worldbook.api.app:create_app",
        factory=True,
        host=host or current.host,
        port=port or current.port,
        workers=workers,
        # The app logs one access line per request, with its request id (ADR 0018); uvicorn's
        # own would name raw paths, and its log config is replaced by the app's.
        access_log=False,
        log_config=None,
    )
