"""Glosses in the hard sets (ADR 0023): the world's book given reader languages, and its
glosses written by a real model before the turns run; the model's replies are memoised so a
re-run scores the same glosses without asking again.

Used by ``benchmarks/bench_hard_set.py --gloss-llm URL``; quality only, never timing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from worldbook.core.glosses import READER_LANGUAGES_SETTING
from worldbook.errors import LLMTruncated
from worldbook.llm_port import LLM, LLMCapabilities, LLMRequest, LLMResult
from worldbook.service.glosses import GlossReport, write_book_glosses
from worldbook.service.services import Services

SAVE_EVERY = 10
"""New replies between two saves of the memo."""


class CachedLLM:
    """An :class:`LLM` that answers a request it has seen from a JSON file, and asks ``inner``
    (then records the reply, or the cut reply of an :class:`LLMTruncated`) otherwise. Keyed
    by the request's messages, schema name and output limit."""

    def __init__(self, inner: LLM, path: Path) -> None:
        self._inner = inner
        self._path = path
        self._lock = threading.Lock()
        self._replies: dict[str, dict[str, Any]] = (
            json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        )
        self.asked = 0

    @property
    def capabilities(self) -> LLMCapabilities:
        return self._inner.capabilities

    @property
    def model(self) -> str:
        return self._inner.model

    def complete(self, request: LLMRequest) -> LLMResult:
        key = _key(request)
        with self._lock:
            found = self._replies.get(key)
        if found is None:
            found = self._ask(request)
            with self._lock:
                self._replies[key] = found
            if self.asked % SAVE_EVERY == 0:  # a long run interrupted keeps what it asked
                self.save()
        if found.get("truncated"):
            # A reply cut at the output limit is a reply too: replayed as the adapter raised it.
            raise LLMTruncated(found["message"], partial=found["text"])
        return LLMResult(text=found["text"], data=found["data"], model=found["model"])

    def _ask(self, request: LLMRequest) -> dict[str, Any]:
        self.asked += 1
        try:
            result = self._inner.complete(request)
        except LLMTruncated as cut:
            return {"truncated": True, "message": cut.message, "text": cut.partial}
        return {"text": result.text, "data": result.data, "model": result.model}

    def save(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            text = json.dumps(self._replies, ensure_ascii=False, sort_keys=True)
        self._path.write_text(text, encoding="utf-8")


def _key(request: LLMRequest) -> str:
    body = {
        "messages": [asdict(m) for m in request.messages],
        "schema": request.schema_name,
        "max": request.max_output_tokens,
    }
    return hashlib.sha256(json.dumps(body, ensure_ascii=False).encode()).hexdigest()


def gloss_preparer(
    llm: LLM, readers: Sequence[str], model: str, reports: dict[str, dict[str, Any]]
) -> Callable[[Services, str], None]:
    """A hard-set ``prepare`` hook: the book reads ``readers`` and its glosses are written
    (``reports[book_id]`` keeps what the writer did)."""

    def prepare(services: Services, book_id: str) -> None:
        book = services.books.get_book(book_id)
        settings = {**book.settings, READER_LANGUAGES_SETTING: list(readers)}
        services.books.update_book(book_id, settings=settings)
        report: GlossReport = write_book_glosses(
            book_id,
            store=services.store,
            llm=llm,
            embedder=services.embedder,
            model=model,
            on_saved=services.invalidate_books,
        )
        reports[book_id] = report.as_dict()

    return prepare
