"""No lore, message text, API key or upstream key in any log line (ADR 0018).

The session-wide log watch (tests/conftest.py) fails any test during which a planted string
reaches a log record; this test plants them where a careless log line would pick them up: an
entry's lore, a turn's messages, a failing upstream model that echoes its key back, a crash.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import closing
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components
from tests.conftest import PLANTED_LORE, PLANTED_SECRET
from worldbook.api.app import create_app


class _EchoingUpstream(BaseHTTPRequestHandler):
    """A broken model server that answers 500 with the request's key and body in its text."""

    def do_POST(self) -> None:
        size = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(size).decode(errors="replace")
        echo = json.dumps({"error": {"message": f"{self.headers.get('authorization')} {body}"}})
        self.send_response(500)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(echo.encode())

    def log_message(self, *_: object) -> None:
        return


@pytest.fixture
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoingUpstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_planted_secrets_and_lore_never_reach_the_logs(
    tmp_path: Path,
    upstream: str,
    log_watch: object,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parts = make_components(
        tmp_path, llm_url=upstream, llm_api_key=PLANTED_SECRET, llm_model="m", llm_max_retries=0
    )
    with closing(parts):
        _, key = parts.services.store.create_api_key("leak-test")
        log_watch.plant(key)  # type: ignore[attr-defined]
        headers = auth(key, "alice")
        app = create_app(components=parts)
        with caplog.at_level(logging.DEBUG), TestClient(app, raise_server_exceptions=False) as c:
            _drive(c, headers, monkeypatch, parts)
        assert caplog.records, "the requests logged nothing at all: the watch saw nothing"
        assert any(r.name == "worldbook.access" for r in caplog.records)


def _drive(c: TestClient, headers: dict[str, str], monkeypatch: pytest.MonkeyPatch, parts) -> None:
    book = c.post("/v1/books", json={"title": "Verrow"}, headers=headers).json()
    entry = {"title": "Verrow Quay", "lore": PLANTED_LORE, "aliases": ["Verrow"]}
    added = c.post(f"/v1/books/{book['id']}/entries", json=entry, headers=headers)
    assert added.status_code == 201, added.text
    turn = {"book_ids": [book["id"]], "messages": [{"role": "user", "content": PLANTED_LORE}]}
    assert c.post("/v1/select", json=turn, headers=headers).status_code == 200
    preview = {"book_ids": [book["id"]], "message": PLANTED_LORE[:200]}
    assert c.post("/v1/preview", json=preview, headers=headers).status_code == 200
    # Refused input that contains the lore (a title far over its limit).
    too_long = {"title": PLANTED_LORE * 3, "lore": PLANTED_LORE}
    assert c.post(f"/v1/books/{book['id']}/entries", json=too_long, headers=headers).status_code
    # The upstream model fails and echoes the key and the prompt (with the lore) back.
    generated = c.post("/v1/books/generate", json={"premise": PLANTED_LORE}, headers=headers)
    assert generated.status_code >= 400
    split = {"text": PLANTED_LORE, "use_llm": True}
    c.post(f"/v1/books/{book['id']}/split", json=split, headers=headers)
    # A key that does not exist, and one in the wrong header.
    assert c.get("/v1/books", headers=auth(PLANTED_SECRET, "alice")).status_code == 401
    # A crash while the lore is in the request.
    monkeypatch.setattr(parts.services.books, "list_books", _crash)
    assert c.get("/v1/books", headers=headers).status_code == 500


def _crash(*_: object, **__: object) -> None:
    raise RuntimeError("storage exploded")
