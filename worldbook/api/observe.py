"""Request ids, the access line, HTTP metrics and ``GET /metrics`` (ADR 0018).

:class:`Observe` wraps the whole app: it takes or makes the request id, returns it as
``X-Request-Id`` on every answer (errors too: the 500 handler reads it from the scope), counts
the response by route *template* (``/v1/books/{book_id}``, never the raw path: ids must not
explode the label space) and writes one access line.
"""

from __future__ import annotations

import hmac
import logging
import time
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worldbook.errors import AuthenticationFailed, NotFound, PermissionDenied
from worldbook.runtime import logs
from worldbook.runtime.metrics import exposition, metrics, rss_bytes
from worldbook.runtime.metrics_dir import forget_dead
from worldbook.service.services import Services

access = logging.getLogger("worldbook.access")
REQUEST_ID_HEADER = "X-Request-Id"
SCOPE_KEY = "worldbook.request_id"
ROUTE_PREFIXES = frozenset({"/v1"})  # the prefixes app.py includes routers under
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _route_of(scope: Scope) -> str:
    """The matched route's template with its router's prefix (``/v1/books/{book_id}``);
    ``unmatched`` when no route matched (a 404 for a path nobody serves)."""
    route = scope.get("route")
    template = getattr(route, "path", None)
    if not isinstance(template, str):
        return "unmatched"
    # An included router's route knows its path without the prefix it was included under:
    # the prefix is what the raw path has before the route's own segments.
    own = template.strip("/").count("/") + 1 if template.strip("/") else 0
    raw = str(scope.get("path", "")).strip("/").split("/")
    prefix = "/".join(raw[: max(0, len(raw) - own)])
    return f"/{prefix}{template}" if prefix and f"/{prefix}" in ROUTE_PREFIXES else template


class Observe:
    """The outermost middleware: request id, access line and HTTP metrics for every answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw = headers.get(b"x-request-id")
        request_id = logs.request_id_from(raw.decode("latin-1") if raw else None)
        scope[SCOPE_KEY] = request_id
        id_token = logs.request_id_var.set(request_id)
        books: list[str] = []
        books_token = logs.books_var.set(books)
        status = [500]
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message["headers"] = [
                    *message.get("headers", []),
                    (b"x-request-id", request_id.encode("latin-1")),
                ]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            took = time.perf_counter() - started
            self._finish(scope, headers, status[0], took, books)
            logs.books_var.reset(books_token)
            logs.request_id_var.reset(id_token)

    @staticmethod
    def _finish(
        scope: Scope, headers: dict[bytes, bytes], status: int, took: float, books: list[str]
    ) -> None:
        route = _route_of(scope)
        method = scope.get("method", "")
        found = metrics()
        found.http.labels(method, route, str(status)).inc()
        found.http_seconds.labels(route).observe(took)
        params = scope.get("path_params") or {}
        book_ids = [*([params["book_id"]] if "book_id" in params else []), *books]
        user = headers.get(b"x-worldbook-user", b"").decode("utf-8", "replace")[:255]
        access.info(
            "%s %s %d %.1fms",
            method,
            route,
            status,
            took * 1000,
            extra={
                "method": method,
                "route": route,
                "status": status,
                "ms": round(took * 1000, 1),
                "user_id": user or None,
                "book_ids": list(dict.fromkeys(book_ids)),
            },
        )


class IndexStates(Collector):
    """Entries by index state and the age of the oldest queued entry, read at scrape time
    from the database every replica shares (so any process's scrape gives the same answer)."""

    def __init__(self, services: Services) -> None:
        self._services = services

    def collect(self) -> Any:
        counts, oldest = self._services.store.index_overview()
        states = GaugeMetricFamily("worldbook_entries", "Entries by index state.", labels=["state"])
        for state, count in sorted(counts.items()):
            states.add_metric([state], count)
        yield states
        age = (datetime.now(UTC) - oldest).total_seconds() if oldest is not None else 0.0
        yield GaugeMetricFamily(
            "worldbook_oldest_pending_seconds",
            "Age of the longest-queued entry (0: nothing queued).",
            value=max(0.0, age),
        )


router = APIRouter(tags=["system"])


def check_access(request: Request, services: Services) -> None:
    """``WORLDBOOK_METRICS``: off (404), loopback (callers on this machine), token (bearer)."""
    settings = services.settings
    if settings.metrics == "off":
        raise NotFound("Metrics are off (WORLDBOOK_METRICS=off).")
    if settings.metrics == "loopback":
        host = request.client.host if request.client else ""
        if host not in LOOPBACK:
            raise PermissionDenied(
                "Metrics are served to loopback callers only (WORLDBOOK_METRICS=loopback)."
            )
        return
    token = settings.metrics_token.get_secret_value() if settings.metrics_token else ""
    presented = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if not token or not hmac.compare_digest(presented.encode(), token.encode()):
        raise AuthenticationFailed("Send the metrics token as 'Authorization: Bearer <token>'.")


@router.get("/metrics", include_in_schema=False)
def metrics_endpoint(request: Request) -> Response:
    """Prometheus text format: every process of this server, plus the shared index states."""
    services: Services = request.app.state.services
    check_access(request, services)
    found = metrics()
    found.rss.set(rss_bytes())
    if found.directory is not None:
        forget_dead(found.directory)
    body = exposition(IndexStates(services))
    return Response(body, media_type=CONTENT_TYPE_LATEST)
