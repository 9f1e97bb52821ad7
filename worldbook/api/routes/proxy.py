"""The proxy's endpoints (ADR 0017): what the official SDKs and chat frontends already speak.

- ``POST /openai/v1/chat/completions`` and ``GET /openai/v1/models`` (base URL
  ``{server}/openai/v1``);
- ``POST /anthropic/v1/messages`` and ``GET /anthropic/v1/models`` (base URL
  ``{server}/anthropic/v1``).

The "API key" is a connection token (``wbc_…``), sent as ``Authorization: Bearer`` or
``x-api-key``; it opens these routes for its one connection and nothing else. Bodies are read
as raw JSON (not a schema): every field worldbook does not own passes to the upstream as sent.
"""

from __future__ import annotations

import time
from datetime import UTC
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from worldbook.adapters.upstream import Upstream, list_models
from worldbook.api.deps import ServicesDep
from worldbook.api.proxy_errors import error_of
from worldbook.api.proxy_http import check_protocol, handle, token_of
from worldbook.core.connections import ConnectionRecord
from worldbook.core.proxy_messages import Protocol
from worldbook.errors import WorldbookError
from worldbook.service.connections import open_connection

router = APIRouter(tags=["proxy"])
JSONDict = dict[str, Any]
_PAGES = {"openai": (), "anthropic": ("limit", "after_id", "before_id")}

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


def _fixed_model(protocol: Protocol, record: ConnectionRecord) -> JSONDict:
    """The list of the connection's one fixed model, in the protocol's shape (OpenAI's
    ``/v1/models`` list; Anthropic's, with the connection's creation as ``created_at``)."""
    model = record.spec.upstream_model
    if protocol == "openai":
        item = {
            "id": model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "worldbook",
        }
        return {"object": "list", "data": [item]}
    created = record.created_at
    created = created if created.tzinfo else created.replace(tzinfo=UTC)
    when = created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    item = {"type": "model", "id": model, "display_name": model, "created_at": when}
    return {"data": [item], "has_more": False, "first_id": model, "last_id": model}


async def _models(request: Request, services: ServicesDep, protocol: Protocol) -> Response:
    """The model to name — the connection's fixed model, else the upstream's list (its pages:
    Anthropic's ``limit`` / ``after_id`` / ``before_id`` go along, so an SDK that walks the
    pages gets the next one, not the first again) — from a connection of this protocol."""
    try:
        opened = await run_in_threadpool(open_connection, services, token_of(request))
        spec = opened.record.spec
        check_protocol(spec.upstream_kind, protocol)
        if spec.upstream_model:
            return JSONResponse(_fixed_model(protocol, opened.record))
        upstream = Upstream(
            spec.upstream_kind,
            spec.upstream_url,
            opened.upstream_key,
            services.settings.proxy_timeout_s,
            services.settings.proxy_connect_timeout_s,
        )
        params = {k: v for k, v in request.query_params.items() if k in _PAGES[protocol]}
        answer = await list_models(upstream, params)
        return Response(answer.body, answer.status, media_type=answer.content_type)
    except WorldbookError as exc:
        return error_of(protocol, exc)


@router.get("/openai/v1/models")
async def openai_models(request: Request, services: ServicesDep) -> Response:
    """The model to name: the connection's fixed model, else the upstream's list."""
    return await _models(request, services, "openai")


@router.get("/anthropic/v1/models")
async def anthropic_models(request: Request, services: ServicesDep) -> Response:
    """The model to name, in Anthropic's list shape: the fixed model, else the upstream's."""
    return await _models(request, services, "anthropic")


@router.post("/anthropic/v1/messages", description=_DOC)
async def anthropic_messages(request: Request, services: ServicesDep) -> Response:
    """Anthropic Messages, with the connection's lore."""
    return await handle(request, services, "anthropic")
