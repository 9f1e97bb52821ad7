"""AI authoring: generate a draft book, split a text into a book's entries
(docs/design/generate-and-split.md).

The language model is built once per app from the ``WORLDBOOK_LLM_*`` settings, on first use
(``get_llm``; tests override the dependency). Model calls block for seconds, so these routes are
plain ``def`` and run in the thread pool.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Request

from worldbook.adapters.llm import build_llm, close_llm
from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId
from worldbook.api.schemas_authoring import (
    GeneratedBookOut,
    GenerateRequest,
    SplitOut,
    SplitRequest,
)
from worldbook.core.drafts import EntryDraft
from worldbook.llm_port import LLM
from worldbook.service import library
from worldbook.service.generate import generate_book
from worldbook.service.split_text import split_into_entries

_build_lock = threading.Lock()


@asynccontextmanager
async def _close_llm_at_shutdown(app: FastAPI) -> AsyncIterator[None]:
    """The model's connections close with the app (FastAPI merges router lifespans)."""
    yield
    close_llm(getattr(app.state, "llm", None))


router = APIRouter(tags=["authoring"], lifespan=_close_llm_at_shutdown)


async def get_llm(request: Request, services: ServicesDep) -> LLM | None:
    """The app's language model (None when ``WORLDBOOK_LLM_URL`` is unset), built once."""
    state = request.app.state
    with _build_lock:
        if not hasattr(state, "llm"):
            state.llm = build_llm(services.settings)
    llm: LLM | None = state.llm
    return llm


LLMDep = Annotated[LLM | None, Depends(get_llm)]


@router.post("/books/generate")
def generate(body: GenerateRequest, caller: CallerDep, llm: LLMDep) -> GeneratedBookOut:
    """A draft book (title, description, 4–16 entries) from a premise; nothing is saved.
    503 naming WORLDBOOK_LLM_URL when no language model is configured."""
    book = generate_book(
        llm, body.premise, count=body.count, language=body.language, seed=body.seed
    )
    return GeneratedBookOut.of(book)


@router.post("/books/{book_id}/split")
def split(
    book_id: BookId, body: SplitRequest, caller: CallerDep, services: ServicesDep, llm: LLMDep
) -> SplitOut:
    """Cut a text (≤ 40,000 characters) into entries whose lore is the text word for word;
    owner only. A dry run unless ``save`` is true; then the entries are added at the end of the
    book and indexed like any new entry."""
    book = library.owned_book(services, caller.user_id, book_id)

    def add(drafts: list[EntryDraft]) -> list[str]:
        return [e.id for e in library.add_entries(services, caller.user_id, book_id, drafts)]

    outcome = split_into_entries(
        body.text,
        llm=llm if body.use_llm else None,
        add_entries=add if body.save else None,
        mode=book.mode,
        seed=body.seed,
    )
    return SplitOut.of(outcome)
