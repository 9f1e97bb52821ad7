"""The turn: select (counts usage), preview (does not), tool lookup, and query prewarming.

Bodies and the response are the service's typed contract (``worldbook.service.contract``):
the same models the CLI builds, documented in ``/openapi.json``. Answers are encoded with
orjson: ~10× faster than the standard encoder on a full trace (benchmarks/bench_response.py).
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, status

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.responses import FastJSONResponse
from worldbook.api.schemas import PrewarmRequest
from worldbook.core import limits
from worldbook.service.contract import (
    LookupOut,
    LookupRequest,
    PreviewRequest,
    SelectionOut,
    SelectRequest,
    run_lookup,
    run_preview,
    run_select,
)

router = APIRouter(tags=["turns"])

_SELECTION: dict[int | str, dict[str, Any]] = {
    200: {"model": SelectionOut, "description": "The selection and its rendering."}
}


@router.post("/select", response_class=FastJSONResponse, responses=_SELECTION)
def select(body: SelectRequest, caller: CallerDep, services: ServicesDep) -> FastJSONResponse:
    """Decide the lore of one real turn (counted in usage statistics).

    The ``Server-Timing`` header gives the turn's own time (``turn;dur=`` in ms), so a client
    can tell the selection's share of the latency from the transport's."""
    started = time.perf_counter()
    result = run_select(services, caller.user_id, body)
    took = (time.perf_counter() - started) * 1000
    return FastJSONResponse(
        result.to_json(trace=body.trace), headers={"Server-Timing": f"turn;dur={took:.2f}"}
    )


@router.post("/preview", response_class=FastJSONResponse, responses=_SELECTION)
def preview(body: PreviewRequest, caller: CallerDep, services: ServicesDep) -> FastJSONResponse:
    """What a turn with this message (or short chat; ≤2,000 characters) would select; not
    counted, no chat state written."""
    result = run_preview(services, caller.user_id, body)
    return FastJSONResponse(result.to_json(trace=body.trace))


@router.post("/lookup")
def lookup(body: LookupRequest, caller: CallerDep, services: ServicesDep) -> LookupOut:
    """The full lore of an entry the model asked for, only from this turn's books and never
    a disabled one. Give ``title`` (the tool call's argument) or ``entry_id``."""
    return run_lookup(services, caller.user_id, body)


@router.post("/prewarm", status_code=status.HTTP_202_ACCEPTED)
def prewarm(body: PrewarmRequest, caller: CallerDep, services: ServicesDep) -> dict[str, int]:
    """Embed finished messages (a reply just generated) in the background, so the next turn
    finds their vectors cached. The work waits in a bounded queue: when it is full the
    request is refused with 429 rather than piling up work the server cannot catch up on."""
    for i, text in enumerate(body.texts):
        limits.check_message(text, field=f"texts[{i}]")
    texts = [t for t in body.texts if t.strip()]
    if texts:
        services.prewarm.submit(texts)
    return {"accepted": len(texts)}
