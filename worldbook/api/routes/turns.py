"""The turn: select (counts usage), preview (does not), tool lookup, and query prewarming."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, BackgroundTasks, status
from fastapi.responses import JSONResponse

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.schemas import (
    LookupOut,
    LookupRequest,
    ModelIn,
    PreviewRequest,
    PrewarmRequest,
    SelectRequest,
    TurnBooks,
)
from worldbook.core import limits
from worldbook.core.profiles import resolve_profile
from worldbook.core.types import Message, ModelProfile
from worldbook.errors import InvalidInput
from worldbook.service import book_usage, turns
from worldbook.service.services import Services

router = APIRouter(tags=["turns"])

_SELECTION_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The selection JSON (canon, injected, index, trace, notes) with the "
        "rendered services: ``messages`` and ``tools`` (OpenAI), ``anthropic`` (system, tools).",
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}


def _source(body: TurnBooks) -> turns.BookSource:
    return turns.BookSource(
        book_ids=tuple(body.book_ids),
        story_id=body.story_id,
        novel_id=body.novel_id,
        characters=tuple(turns.CastMember(c.id, c.name) for c in body.characters),
    )


def _profile(services: Services, body: ModelIn) -> ModelProfile:
    return resolve_profile(
        body.model,
        input_window=body.input_window,
        tokenizer=body.tokenizer,
        supports_tools=body.supports_tools,
        default_window=services.settings.default_input_window,
        default_tokenizer=services.settings.tokenizer,
    )


@router.post("/select", response_class=JSONResponse, responses=_SELECTION_DOC)
def select(body: SelectRequest, caller: CallerDep, services: ServicesDep) -> JSONResponse:
    """Decide the lore of one real turn (counted in usage statistics).

    The ``Server-Timing`` header gives the turn's own time (``turn;dur=`` in ms), so a client
    can tell the selection's share of the latency from the transport's."""
    messages = [Message(role=m.role, content=m.content, name=m.name) for m in body.messages]
    started = time.perf_counter()
    result = turns.select_turn(
        services,
        user_id=caller.user_id,
        source=_source(body),
        messages=messages,
        profile=_profile(services, body),
    )
    took = (time.perf_counter() - started) * 1000
    return JSONResponse(result.to_json(), headers={"Server-Timing": f"turn;dur={took:.2f}"})


@router.post("/preview", response_class=JSONResponse, responses=_SELECTION_DOC)
def preview(body: PreviewRequest, caller: CallerDep, services: ServicesDep) -> JSONResponse:
    """What a turn with this one message (≤2,000 characters) would select; not counted."""
    result = turns.preview(
        services,
        user_id=caller.user_id,
        source=_source(body),
        message=body.message,
        profile=_profile(services, body),
    )
    return JSONResponse(result.to_json())


@router.post("/lookup")
def lookup(body: LookupRequest, caller: CallerDep, services: ServicesDep) -> LookupOut:
    """The full lore of an entry the model asked for, only from this turn's books and never
    a disabled one. Give ``title`` (the tool call's argument) or ``entry_id``."""
    source = _source(body)
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
        profile=_profile(services, body),
    )
    title = next(e.title for e in book.entries if e.id == entry_id)
    return LookupOut(book_id=book.id, entry_id=entry_id, title=title, lore=lore)


@router.post("/prewarm", status_code=status.HTTP_202_ACCEPTED)
def prewarm(
    body: PrewarmRequest, caller: CallerDep, services: ServicesDep, background: BackgroundTasks
) -> dict[str, int]:
    """Embed finished messages (a reply just generated) after answering, so the next turn
    finds their vectors cached."""
    for i, text in enumerate(body.texts):
        limits.check_text(
            text, field=f"texts[{i}]", limit="message to prewarm", max_len=limits.LIMITS.lore_max
        )
    texts = [t for t in body.texts if t.strip()]
    if texts:
        background.add_task(services.query_embeddings.prewarm, texts)
    return {"accepted": len(texts)}
