"""The proxy's endpoints (ADR 0017): what the official SDKs and chat frontends already speak.

- ``POST /openai/v1/chat/completions`` and ``GET /openai/v1/models`` (base URL
  ``{server}/openai/v1``);
- ``POST /anthropic/v1/messages`` (base URL ``{server}/anthropic/v1``).

The "API key" is a connection token (``wbc_…``), sent as ``Authorization: Bearer`` or
``x-api-key``; it opens these routes for its one connection and nothing else. Bodies are read
as raw JSON (not a schema): every field worldbook does not own passes to the upstream as sent.
"""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from worldbook.adapters.upstream import Upstream, list_models
from worldbook.api.deps import ServicesDep
from worldbook.api.proxy_errors import error_of
from worldbook.api.proxy_http import handle, token_of
from worldbook.errors import WorldbookError
from worldbook.service.connections import open_connection

router = APIRouter(tags=["proxy"])

_DOC = (
    "Authenticate with a connection token (`worldbook connections create`) as the API key. "
    "The body is the protocol's own; worldbook adds the lore and its tools and passes the "
    "rest through. Headers: `X-Worldbook-Chat` names the chat (optional); the answer's "
    "`X-Worldbook-Trace` summarises what the lore took and gave up."
)


@router.post("/openai/v1/chat/completions", description=_DOC)
async def openai_chat(request: Request, services: ServicesDep) -> Response:
    """OpenAI Chat Completions, with the connection's lore."""
    return await handle(request, services, "openai")


@router.get("/openai/v1/models")
async def openai_models(request: Request, services: ServicesDep) -> Response:
    """The model to name: the connection's fixed model, else the upstream's list."""
    try:
        opened = await run_in_threadpool(open_connection, services, token_of(request))
        spec = opened.record.spec
        if spec.upstream_model:
            model = {
                "id": spec.upstream_model,
                "object": "model",
                "created": int(time.time()),
                "owned_by": "worldbook",
            }
            return JSONResponse({"object": "list", "data": [model]})
        upstream = Upstream(
            spec.upstream_kind,
            spec.upstream_url,
            opened.upstream_key,
            services.settings.proxy_timeout_s,
            services.settings.proxy_connect_timeout_s,
        )
        answer = await list_models(upstream)
        return Response(answer.body, answer.status, media_type=answer.content_type)
    except WorldbookError as exc:
        return error_of("openai", exc)


@router.post("/anthropic/v1/messages", description=_DOC)
async def anthropic_messages(request: Request, services: ServicesDep) -> Response:
    """Anthropic Messages, with the connection's lore."""
    return await handle(request, services, "anthropic")
