"""Liveness and readiness (no API key: load balancers and orchestrators call these).

Both answer under any load: ``/health`` runs on the event loop and touches nothing, and
``/ready``'s checks run on two threads of their own, so a thread pool full of turns or
imports never makes an orchestrator think the process is dead
(docs/design/http-api.md, "Process life").
"""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from worldbook.core.records import BookQuery
from worldbook.errors import WorldbookError
from worldbook.service.services import Services

router = APIRouter(tags=["system"])

_READY_THREADS = anyio.CapacityLimiter(2)


@router.get("/health")
async def health() -> dict[str, str]:
    """The process is up and answering (it checks nothing else)."""
    return {"status": "ok"}


def readiness(services: Services | None) -> tuple[bool, dict[str, Any]]:
    """Which services are up: the database (a read), the indexing queue (its thread or broker),
    and the embedder (its model id, and whether the model is loaded yet — it loads on the
    first turn or indexing job, so "not loaded" is not "not ready")."""
    if services is None:
        return False, {"components": {"up": False, "detail": "starting"}}
    report: dict[str, Any] = {}
    try:
        services.books.list_books(BookQuery(limit=1))
        report["database"] = {"up": True}
    except WorldbookError as exc:
        report["database"] = {"up": False, "detail": exc.message}
    queue_up = services.queue.healthy()
    kind = "celery" if services.settings.broker_url else "in-process"
    report["queue"] = {"up": queue_up, "kind": kind}
    loaded = services.embedder.loaded
    report["embedder"] = {"up": True, "model_id": services.model_id, "loaded": loaded}
    if services.aligned is not None:  # the cross-lingual second view (ADR 0016)
        aligned = services.aligned.embedder
        report["aligned_embedder"] = {"up": True, "model_id": aligned.model_id}
        report["aligned_embedder"]["loaded"] = aligned.loaded
    usage = services.usage
    report["usage_recorder"] = {"up": True, "pending": usage.pending(), "dropped": usage.dropped}
    return report["database"]["up"] and queue_up, report


@router.get("/ready")
async def ready(request: Request) -> JSONResponse:
    """200 when the database and the indexing queue answer, else 503; the body says which."""
    services: Services | None = getattr(request.app.state, "services", None)
    ok, report = await anyio.to_thread.run_sync(readiness, services, limiter=_READY_THREADS)
    return JSONResponse({"ready": ok, "parts": report}, status_code=200 if ok else 503)
