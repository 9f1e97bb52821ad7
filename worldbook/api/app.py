"""The FastAPI app factory (``worldbook serve`` runs ``create_app`` with uvicorn's --factory).

Settings are built only when the factory is called, never at import. An app built from settings
owns its :class:`Components`: they are built at startup (opening and migrating the database,
starting the in-process indexer, loading the embedding model in the background) and closed at
shutdown. Components passed in (tests, embedding the app in another process) belong to the
caller, who closes them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from worldbook.adapters.upstream import close_client
from worldbook.api import observe
from worldbook.api.errors import error_body, install_error_handlers
from worldbook.api.routes import (
    attachments,
    authoring,
    books,
    chats,
    connections,
    entries,
    glosses,
    limits,
    proxy,
    stats,
    system,
    transfer,
    turns,
    ui,
    writes,
)
from worldbook.runtime.logs import configure_logging
from worldbook.runtime.metrics import metrics
from worldbook.runtime.metrics_dir import mark_exited
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings

API_PREFIX = "/v1"


class BodySizeLimit:
    """Refuse request bodies over ``max_bytes`` with 413, before a route reads them.

    A declared Content-Length is checked up front; a chunked body is counted as it streams and
    cut off at the limit, so no request can make the process buffer more than ``max_bytes``.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _message(self) -> str:
        return f"upload size must be at most {self.max_bytes:,} bytes; send a smaller body."

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # HTTPException passes through FastAPI's body parsing unchanged (any other
                    # error there becomes a 400), and the error handlers shape it.
                    raise HTTPException(413, detail=self._message())
            return message

        await self.app(scope, limited, send)

    async def _refuse(self, send: Send) -> None:
        import json

        body = json.dumps(error_body("payload_too_large", self._message(), "body")).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def create_app(
    settings: WorldbookSettings | None = None, *, components: Components | None = None
) -> FastAPI:
    """The worldbook HTTP service. With neither argument, settings come from the environment."""
    if components is not None:
        settings = components.settings
    elif settings is None:
        settings = WorldbookSettings()
        configure_logging(settings.log_format)  # the process's entry point (serve's factory)
    resolved: WorldbookSettings = settings

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        owned = components is None
        if owned:
            built = Components(resolved)
            app.state.components, app.state.services = built, built.services
            built.warm_up_in_background()
        try:
            yield
        finally:
            await close_client()  # the proxy's upstream connections (ADR 0017)
            if owned:
                app.state.components.close()
                mark_exited(metrics().directory)  # its live gauges (RSS) leave with it

    app = FastAPI(
        title="worldbook",
        version="1",
        summary="World-book retrieval: which lore reaches the model, within budgets, and why.",
        description=(
            "Authenticate with an API key (`Authorization: Bearer <key>` or `X-API-Key`) and "
            "name the acting user in `X-Worldbook-User`. Errors are "
            '`{"error": {"code", "message", "field"?}}`.'
        ),
        lifespan=lifespan,
    )
    if components is not None:
        app.state.components, app.state.services = components, components.services
    install_error_handlers(app)
    app.add_middleware(BodySizeLimit, max_bytes=resolved.max_upload_bytes)
    app.add_middleware(observe.Observe)  # request ids, access lines, HTTP metrics (ADR 0018)
    app.include_router(system.router)
    app.include_router(observe.router)
    for module in (books, entries, attachments, transfer, turns, stats, chats):
        app.include_router(module.router, prefix=API_PREFIX)
    app.include_router(authoring.router, prefix=API_PREFIX)
    app.include_router(glosses.router, prefix=API_PREFIX)  # readers' languages (ADR 0023)
    app.include_router(writes.router, prefix=API_PREFIX)  # the living world (ADR 0006)
    app.include_router(limits.router, prefix=API_PREFIX)  # public: the page reads its limits
    app.include_router(connections.router, prefix=API_PREFIX)  # proxy connections (ADR 0017)
    app.include_router(proxy.router)  # /openai/v1 and /anthropic/v1 (ADR 0017)
    ui.install(app)  # the lore inspector at /ui, a client of /v1 like any other app
    return app
