"""/metrics, request ids and access lines through the real app (ADR 0018)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from tests.api.conftest import Keys, auth, make_components, new_book
from worldbook.api.app import create_app
from worldbook.runtime.logs import JsonFormatter, RequestIdFilter, configure_logging
from worldbook.runtime.metrics import metrics
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings

LOOPBACK = ("127.0.0.1", 40000)


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample of the exposition text (0 when absent)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name):
            continue
        head, _, value = line.rpartition(" ")
        if not head.startswith(name + "{") and head != name:
            continue
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            return float(value)
    return 0.0


@pytest.fixture
def local(client: TestClient) -> Iterator[TestClient]:
    """The same app, called from the loopback address."""
    with TestClient(client.app, raise_server_exceptions=False, client=LOOPBACK) as made:
        yield made


def test_metrics_families_move_when_turns_run(local: TestClient, alice: dict[str, str]) -> None:
    book = new_book(local, alice, entries=3)
    before = local.get("/metrics")
    assert before.status_code == 200
    assert before.headers["content-type"].startswith("text/plain")
    turns_before = sample(before.text, "worldbook_turn_seconds_count", path="whole_book")
    turn = {"book_ids": [book["id"]], "messages": [{"role": "user", "content": "Entry 1?"}]}
    for _ in range(3):
        assert local.post("/v1/select", json=turn, headers=alice).status_code == 200
    local.get(f"/v1/books/{book['id']}", headers=alice)
    after = local.get("/metrics").text
    assert sample(after, "worldbook_turn_seconds_count", path="whole_book") == turns_before + 3
    for stage in ("resolve_books", "selection", "rendering", "literal_match"):
        assert sample(after, "worldbook_turn_stage_seconds_count", stage=stage) >= 3
    assert (
        sample(after, "worldbook_entries", state="queued")
        + sample(after, "worldbook_entries", state="indexed")
        >= 3
    )
    assert "worldbook_oldest_pending_seconds" in after
    assert sample(after, "worldbook_process_rss_bytes") > 10_000_000
    # Routes by template, never by raw path.
    assert (
        sample(after, "worldbook_http_responses_total", route="/v1/books/{book_id}", status="200")
        >= 1
    )
    assert str(book["id"]) not in after
    for family in (
        "worldbook_query_cache_total",
        "worldbook_cache_builds_total",
        "worldbook_http_request_seconds_bucket",
    ):
        assert family in after or family.replace("_total", "") in after, family


def test_metrics_access_modes(tmp_path: Path, client: TestClient) -> None:
    # The default, loopback: the test client's own address is not loopback.
    assert client.get("/metrics").status_code == 403
    for mode, expected in (("off", 404), ("token", 401)):
        (tmp_path / mode).mkdir()
        parts = make_components(tmp_path / mode, metrics=mode, metrics_token="s3cret")
        with closing(parts), TestClient(create_app(components=parts), client=LOOPBACK) as made:
            assert made.get("/metrics").status_code == expected
            if mode == "token":
                ok = made.get("/metrics", headers={"Authorization": "Bearer s3cret"})
                assert ok.status_code == 200
                bad = made.get("/metrics", headers={"Authorization": "Bearer s3cre"})
                assert bad.status_code == 401
    with pytest.raises(ValidationError, match="METRICS_TOKEN"):
        WorldbookSettings(metrics="token")


def test_request_id_on_every_answer(client: TestClient, alice: dict[str, str]) -> None:
    given = client.get("/v1/books", headers={**alice, "X-Request-Id": "req-abc.1"})
    assert given.headers["x-request-id"] == "req-abc.1"
    made = client.get("/v1/books/nope", headers=alice)
    assert made.status_code == 404
    assert re.fullmatch(r"[0-9a-f]{16}", made.headers["x-request-id"])
    hostile = client.get("/v1/books", headers={**alice, "X-Request-Id": "a b\tc" * 50})
    assert hostile.headers["x-request-id"] != "a b\tc" * 50
    assert client.get("/health").headers["x-request-id"]
    assert client.get("/v1/books").status_code == 401  # no key: an error, still an id
    assert client.get("/v1/books").headers["x-request-id"]


def test_request_id_on_unexpected_errors(
    parts: Components, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(parts.services.books, "list_books", broken)
    with TestClient(create_app(components=parts), raise_server_exceptions=False) as made:
        answer = made.get("/v1/books", headers={**auth(keys.valid, "a"), "X-Request-Id": "r500"})
    assert answer.status_code == 500
    assert answer.headers["x-request-id"] == "r500"


def test_one_access_line_per_request(
    client: TestClient, alice: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    book = new_book(client, alice, entries=2)
    turn = {"book_ids": [book["id"]], "messages": [{"role": "user", "content": "Entry 1?"}]}
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="worldbook.access"):
        client.post("/v1/select", json=turn, headers={**alice, "X-Request-Id": "turn-1"})
        client.get(f"/v1/books/{book['id']}", headers={**alice, "X-Request-Id": "get-1"})
    lines = [r for r in caplog.records if r.name == "worldbook.access"]
    assert [r.route for r in lines] == ["/v1/select", "/v1/books/{book_id}"]  # type: ignore[attr-defined]
    first = lines[0]
    assert first.status == 200 and first.user_id == "alice"  # type: ignore[attr-defined]
    assert first.book_ids == [book["id"]]  # type: ignore[attr-defined]
    assert first.ms >= 0  # type: ignore[attr-defined]
    record = logging.LogRecord("worldbook.access", 20, "x", 1, "GET", None, None)
    record.route, record.request_id = "/v1/select", "turn-1"
    line = json.loads(JsonFormatter().format(record))
    assert line["route"] == "/v1/select" and line["request_id"] == "turn-1"


def test_json_log_format_carries_the_request_id(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("json")
    root = logging.getLogger()
    try:
        logging.getLogger("worldbook.test").warning("hello %s", "there")
    finally:
        for handler in list(root.handlers):
            if handler.get_name() == "worldbook":
                root.removeHandler(handler)
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["message"] == "hello there" and line["level"] == "WARNING"
    assert line["request_id"] == "-"
    assert isinstance(RequestIdFilter(), logging.Filter)


def test_metrics_build_in_process_without_a_directory() -> None:
    # The single-process path: no multiprocess directory, values in this registry.
    found = metrics()
    assert found.directory is None
    found.cache_size.labels("matcher").set(1)
    found.http.labels("GET", "/x", "200").inc()


def test_a_semantic_turn_reports_its_search_stages(
    local: TestClient, alice: dict[str, str], parts: Components
) -> None:
    book = new_book(local, alice, entries=120)  # too large to travel whole
    assert parts.services.queue.wait_idle(60)  # type: ignore[attr-defined]
    before = local.get("/metrics").text
    turn = {
        "book_ids": [book["id"]],
        "messages": [{"role": "user", "content": "Which entry has lore long enough to pass?"}],
    }
    answer = local.post("/v1/select", json=turn, headers=alice).json()
    assert any(t["reason"].startswith("semantic") for t in answer["trace"])
    after = local.get("/metrics").text

    def moved(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert moved("worldbook_turn_seconds_count", path="semantic") == 1
    for stage in ("query_embedding", "vector_search", "literal_match", "selection"):
        assert moved("worldbook_turn_stage_seconds_count", stage=stage) == 1
    assert moved("worldbook_query_cache_total", result="miss") == 1
    assert moved("worldbook_cache_builds_total", cache="vector_index") >= 1
