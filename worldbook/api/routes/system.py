"""Liveness and readiness (no API key: load balancers and orchestrators call these)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from worldbook.errors import WorldbookError
from worldbook.service.components import Components

router = APIRouter(tags=["system"])


@router.get("/health")
def health() -> dict[str, str]:
    """The process is up and answering (it checks nothing else)."""
    return {"status": "ok"}


def readiness(parts: Components | None) -> tuple[bool, dict[str, Any]]:
    """Which parts are up: the database (a read), the indexing queue (its thread or broker),
    and the embedder (its model id, and whether the model is loaded yet — it loads on the
    first turn or indexing job, so "not loaded" is not "not ready")."""
    if parts is None:
        return False, {"components": {"up": False, "detail": "starting"}}
    report: dict[str, Any] = {}
    try:
        parts.store.list_books(limit=1)
        report["database"] = {"up": True}
    except WorldbookError as exc:
        report["database"] = {"up": False, "detail": exc.message}
    healthy = getattr(parts.queue, "healthy", None)
    queue_up = bool(healthy()) if callable(healthy) else True
    kind = "celery" if parts.settings.broker_url else "in-process"
    report["queue"] = {"up": queue_up, "kind": kind}
    # Embedders load their model lazily and keep it in ``_model``; absent means "not lazy".
    loaded = getattr(parts.embedder, "_model", True) is not None
    report["embedder"] = {"up": True, "model_id": parts.model_id, "loaded": loaded}
    usage = parts.usage
    report["usage_recorder"] = {"up": True, "pending": usage.pending(), "dropped": usage.dropped}
    return report["database"]["up"] and queue_up, report


@router.get("/ready")
def ready(request: Request) -> JSONResponse:
    """200 when the database and the indexing queue answer, else 503; the body says which."""
    ok, report = readiness(getattr(request.app.state, "components", None))
    return JSONResponse({"ready": ok, "parts": report}, status_code=200 if ok else 503)
