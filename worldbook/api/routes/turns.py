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
from worldbook.errors import InvalidInput
from worldbook.service import book_usage, turns
from worldbook.service.contract import (
    LookupOut,
    LookupRequest,
    PreviewRequest,
    SelectionOut,
    SelectRequest,
    profile_of,
    run_preview,
    run_select,
    source_of,
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
    source = source_of(body)
    if (body.title is None) == (body.entry_id is None):
        raise InvalidInput("Give exactly one of title or entry_id.", field="title")
    if body.entry_id is not None:
        entry = book_usage.lookup_by_id(services, caller.user_id, source, body.entry_id)
        return LookupOut(
            book_id=entry.book_id, entry_id=entry.id, title=entry.title, lore=entry.lore
        )
    assert body.title is not None
    book, entry_id, lore = turns.lookup_entry(
        services,
        user_id=caller.user_id,
        source=source,
        title=body.title,
        profile=profile_of(services.settings, body),
        chat_id=body.chat_id,
        user_name=body.user_name,
    )
    title = next(e.title for e in book.entries if e.id == entry_id)
    return LookupOut(book_id=book.id, entry_id=entry_id, title=title, lore=lore)


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
