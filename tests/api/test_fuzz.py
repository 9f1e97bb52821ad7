"""Fuzz every operation with inputs generated from the app's own OpenAPI schema (schemathesis):
whatever is sent, the service answers with a 2xx/4xx in the error shape, never a 5xx.

Bounded for the normal test run: 20 examples per operation, no deadline. Path ids are pointed
at a real book and entry of the caller (half the time) so generated bodies reach the use cases
instead of stopping at "not found".
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings

from tests.api.conftest import auth, make_components
from tests.llm_fakes import StaticLLM
from worldbook.api.app import create_app
from worldbook.api.routes.authoring import get_llm
from worldbook.core.drafts import BookDraft, EntryDraft


@pytest.fixture
def fuzz_target(tmp_path: Path) -> Iterator[dict[str, Any]]:
    parts = make_components(tmp_path)
    _, key = parts.services.store.create_api_key("fuzz")
    book = parts.services.store.create_book("fuzzer", BookDraft(title="Fuzzed world"))
    drafts = [
        EntryDraft(title=f"Topic {i}", lore=f"Lore of topic {i}, long enough.") for i in range(12)
    ]
    entries = [e.id for e in parts.services.store.add_entries(book.id, drafts)]
    app = create_app(components=parts)
    app.dependency_overrides[get_llm] = StaticLLM  # AI authoring routes answer, not 503
    try:
        yield {"app": app, "headers": auth(key, "fuzzer"), "book": book.id, "entries": entries}
    finally:
        parts.close()


def _schema_app() -> Any:
    """An app for reading the schema only (collection time). Reading the schema may start the
    app, so its database is in memory: nothing is written into the checkout."""
    from worldbook.settings import WorldbookSettings

    return create_app(WorldbookSettings(embedder="fake", database_url="sqlite://"))


# schemathesis' lazy ``from_fixture`` loader breaks on pytest 9 (it rewrites a private node
# attribute), so the schema is read eagerly from a schema-only app; requests go to the
# fixture's app, which has a database.
schema = schemathesis.openapi.from_asgi("/openapi.json", _schema_app())


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_server_errors(case: Any, fuzz_target: dict[str, Any]) -> None:
    params = case.path_parameters or {}
    if params and zlib.crc32(repr(case.body).encode()) % 2 == 0:
        if "book_id" in params:
            params["book_id"] = fuzz_target["book"]
        if "entry_id" in params:
            params["entry_id"] = fuzz_target["entries"][0]
    with TestClient(fuzz_target["app"], raise_server_exceptions=False) as client:
        kwargs = case.as_transport_kwargs(headers=fuzz_target["headers"])
        kwargs.pop("base_url", None)
        _encodable_form(kwargs)
        response = client.request(**kwargs)
    assert response.status_code < 500, f"{case.method} {case.path} → {response.text[:500]}"
    if response.status_code >= 400 and case.path != "/ready":
        # The proxy answers in the shape of the protocol called (ADR 0017).
        shape = {"type", "error"} if case.path.startswith("/anthropic/") else {"error"}
        assert set(response.json()) == shape, (response.status_code, response.text)


def _encodable_form(kwargs: dict[str, Any]) -> None:
    """Multipart fields must be text or bytes on the wire; schemathesis sometimes generates a
    number for a field, which httpx then fails to encode *inside* the test client's receive()
    — an error of the client, not a server error. Send it as text, as a browser would."""

    def text(value: Any) -> Any:
        return value if isinstance(value, str | bytes) else str(value)

    for name in ("data", "files"):
        fields = kwargs.get(name)
        if isinstance(fields, dict):
            kwargs[name] = {key: text(value) for key, value in fields.items()}
        elif isinstance(fields, list):
            kwargs[name] = [
                (
                    key,
                    (part[0], text(part[1]), *part[2:]) if isinstance(part, tuple) else text(part),
                )
                for key, part in fields
            ]
