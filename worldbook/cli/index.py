"""``worldbook index`` and ``worldbook worker``."""

from __future__ import annotations

import logging
import time
from typing import Annotated

import typer
from rich.progress import Progress

from worldbook.cli.context import emit_json, handle_errors, open_services, settings, show_progress
from worldbook.core.glosses import gloss_model_ids
from worldbook.core.types import IndexStatus
from worldbook.errors import ServiceUnavailable
from worldbook.ports import Store
from worldbook.runtime.logs import configure_logging
from worldbook.runtime.metrics import serve_metrics
from worldbook.runtime.metrics_dir import prepare as prepare_metrics_dir
from worldbook.service.glosses import embed_stored_glosses
from worldbook.service.indexing import index_now, rebuild, sweep
from worldbook.service.services import Services


@handle_errors
def index_command(
    book: Annotated[str | None, typer.Option("--book", help="Only this book.")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Return when indexing is done.")] = False,
    rebuild_all: Annotated[
        bool, typer.Option("--rebuild", help="Re-embed everything (e.g. after a model change).")
    ] = False,
    sweep_only: Annotated[
        bool, typer.Option("--sweep", help="Re-queue anything missing or stale, then return.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Index entries with the configured embedder.

    Without a broker the work is done here, in this process (``--wait`` is implied: nothing
    else would do it). With a broker the entries are queued for the Celery workers; ``--wait``
    then polls until every enabled entry is indexed or has failed.
    """
    with open_services() as services:
        store, model_id = services.vectors, services.model_id
        broker = bool(services.settings.broker_url)
        aligned = services.aligned.model_id if services.aligned is not None else None
        if rebuild_all:
            # The aligned view (ADR 0016) and the gloss views (ADR 0023) are rebuilt with it.
            for derived in ([aligned] if aligned else []) + list(gloss_model_ids(model_id)):
                store.delete_vectors(model_id=derived, book_id=book)
            rebuild(store, model_id, book_id=book, queue=services.queue if broker else None)
        to_index = store.entries_to_index(model_id, book_id=book)
        pending = [r.entry_id for r in to_index]
        summary: dict[str, object] = {
            "model_id": model_id,
            "model_ids": [model_id, *([aligned] if aligned else [])],
            "pending": len(pending),
        }
        if services.settings.glosses and not sweep_only:
            # Gloss vectors need only the stored glosses and the model: embedded here, in
            # either mode, so a rebuild or a new model never leaves the glosses unsearchable.
            summary["gloss_vectors"] = embed_stored_glosses(
                [r.book_id for r in to_index],
                store=services.store,
                embedder=services.embedder,
            )
        if broker:
            summary["queued"] = sweep(store, services.queue, model_id, book_id=book)
            if aligned is not None:
                sweep(store, services.queue, aligned, book_id=book)
            if wait and not sweep_only:
                summary.update(_wait_for_workers(services.store, model_id, book, len(pending)))
        elif not sweep_only:
            summary.update(_index_here(services, book, len(pending)))
    if as_json:
        emit_json(summary)
        return
    for key, value in summary.items():
        typer.echo(f"{key}: {value}")


def _index_here(services: Services, book: str | None, total: int) -> dict[str, object]:
    with Progress(disable=not show_progress(), transient=True) as bar:
        task = bar.add_task("indexing", total=total)
        report = index_now(services, None, book_id=book, on_progress=lambda n: bar.advance(task, n))
    return {"indexed": len(report.indexed), "failed": report.failed, "stale": len(report.stale)}


def _wait_for_workers(
    store: Store, model_id: str, book: str | None, total: int, timeout_s: float = 3600
) -> dict[str, object]:
    """Poll until every enabled entry has a current vector or has failed."""
    deadline = time.monotonic() + timeout_s
    with Progress(disable=not show_progress(), transient=True) as bar:
        task = bar.add_task("waiting for workers", total=total)
        while time.monotonic() < deadline:
            left = [r.entry_id for r in store.entries_to_index(model_id, book_id=book)]
            statuses = store.index_statuses(left)
            failed = {i: s[1] or "" for i, s in statuses.items() if s[0] == IndexStatus.FAILED}
            bar.update(task, completed=total - len(left) + len(failed))
            if len(failed) == len(left):
                return {"indexed": total - len(left), "failed": failed}
            time.sleep(1.0)
    raise ServiceUnavailable(
        f"Indexing did not finish within {timeout_s:.0f}s; are workers running "
        "(`worldbook worker`)?"
    )


@handle_errors
def worker_command(
    concurrency: Annotated[int, typer.Option(help="Worker processes.")] = 1,
    beat: Annotated[
        bool,
        typer.Option(
            help="Run the periodic indexing sweep (Celery beat, on by default). Several "
            "workers may all beat: a Redis lock lets one sweep run per interval."
        ),
    ] = True,
    loglevel: Annotated[str, typer.Option(help="Celery log level.")] = "INFO",
) -> None:
    """Start a Celery indexing worker (needs WORLDBOOK_BROKER_URL)."""
    from workers.celery_app import make_celery

    current = settings()
    configure_logging(current.log_format)
    # Before the pool forks: every pool process writes its metrics to this run's directory,
    # and this process serves them all on the metrics port (ADR 0018).
    prepare_metrics_dir(current.data_dir, "worker")
    if current.worker_metrics_port:
        try:
            serve_metrics(current.worker_metrics_port)
        except OSError as exc:  # metrics are for the operator; indexing goes on without them
            logging.getLogger(__name__).warning(
                "worker metrics not served on port %d: %s", current.worker_metrics_port, exc
            )
    app = make_celery(current)
    argv = ["worker", f"--concurrency={concurrency}", f"--loglevel={loglevel}"]
    if beat:
        argv.append("--beat")
    app.worker_main(argv)
