"""One mapping from every domain error to a status, and one body shape for every failure."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.api.conftest import entry_body, new_book
from worldbook import errors
from worldbook.api.errors import STATUS, install_error_handlers, status_for


def test_every_domain_error_has_a_mapping() -> None:
    missing = [cls.__name__ for cls in errors.all_error_types() if cls not in STATUS]
    assert missing == []


def test_statuses_follow_the_hierarchy() -> None:
    for cls in errors.all_error_types():
        if issubclass(cls, errors.NotFound):
            assert STATUS[cls] == 404
        if issubclass(cls, errors.ServiceUnavailable):
            assert STATUS[cls] == 503
        if issubclass(cls, errors.InvalidInput) and cls is not errors.PayloadTooLarge:
            assert STATUS[cls] == 422


def _instance(cls: type[errors.WorldbookError]) -> errors.WorldbookError:
    if issubclass(cls, errors.LimitExceeded):
        return cls(limit="test limit", allowed="at most 1", actual="2", field="f")  # type: ignore[call-arg]
    return cls("went wrong; do this instead", field="f")


@pytest.mark.parametrize("cls", errors.all_error_types(), ids=lambda c: c.__name__)
def test_each_error_renders_as_the_one_body_shape(cls: type[errors.WorldbookError]) -> None:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/boom")
    def boom() -> None:
        raise _instance(cls)

    response = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert response.status_code == status_for(_instance(cls)) == STATUS[cls]
    body = response.json()["error"]
    assert body["code"] == cls.code
    assert body["field"] == "f"
    assert body["message"]


def test_unknown_fields_are_422_naming_the_field(client: TestClient, alice: dict[str, str]) -> None:
    response = client.post("/v1/books", json={"title": "T", "colour": "red"}, headers=alice)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "colour"


def test_invalid_json_is_422(client: TestClient, alice: dict[str, str]) -> None:
    response = client.post(
        "/v1/books", content=b"{not json", headers={**alice, "Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_input"


def test_wrong_type_names_the_nested_field(client: TestClient, alice: dict[str, str]) -> None:
    book = new_book(client, alice)
    body = {"entries": [entry_body(0), {"title": "X", "lore": 5}]}
    response = client.post(f"/v1/books/{book['id']}/entries/batch", json=body, headers=alice)
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "entries[1].lore"


def test_limits_are_422_naming_the_limit(client: TestClient, alice: dict[str, str]) -> None:
    book = new_book(client, alice)
    short = client.post(
        f"/v1/books/{book['id']}/entries", json={"title": "T1", "lore": "short"}, headers=alice
    )
    assert short.status_code == 422
    assert short.json()["error"]["code"] == "limit_exceeded"
    assert "entry lore" in short.json()["error"]["message"]
    publish = client.patch(f"/v1/books/{book['id']}", json={"visibility": "public"}, headers=alice)
    assert publish.status_code == 422
    assert "entries required to publish" in publish.json()["error"]["message"]
    bulk = client.post(
        f"/v1/books/{book['id']}/entries/bulk",
        json={"action": "delete", "ids": [f"id{i}" for i in range(501)]},
        headers=alice,
    )
    assert bulk.status_code == 422
    assert "bulk action" in bulk.json()["error"]["message"]
    batch = client.post(
        f"/v1/books/{book['id']}/entries/batch",
        json={"entries": [entry_body(i) for i in range(501)]},
        headers=alice,
    )
    assert batch.status_code == 422
    assert "import batch" in batch.json()["error"]["message"]
    assert client.get(f"/v1/books/{book['id']}", headers=alice).json()["entry_count"] == 0


def test_oversized_bodies_are_413(tmp_path: object, keys: object, parts: object) -> None:
    from tests.api.conftest import auth, make_components
    from worldbook.api.app import create_app

    small = make_components(tmp_path, max_upload_bytes=2048)  # type: ignore[arg-type]
    try:
        _, key = small.services.store.create_api_key("k")
        headers = auth(key, "alice")
        with TestClient(create_app(components=small), raise_server_exceptions=False) as client:
            declared = client.post("/v1/books", json={"title": "x" * 4000}, headers=headers)
            assert declared.status_code == 413
            assert declared.json()["error"]["code"] == "payload_too_large"

            def chunks():  # no Content-Length: counted while streaming
                for _ in range(10):
                    yield b" " * 500

            streamed = client.post(
                "/v1/books/import",
                content=chunks(),
                headers={**headers, "Content-Type": "application/octet-stream"},
            )
            assert streamed.status_code == 413
            assert streamed.json()["error"]["code"] == "payload_too_large"
            streamed_json = client.post(
                "/v1/books",
                content=chunks(),
                headers={**headers, "Content-Type": "application/json"},
            )
            assert streamed_json.status_code == 413
    finally:
        small.close()


def test_unknown_route_and_method_use_the_same_shape(client: TestClient) -> None:
    assert client.get("/v1/nothing").json()["error"]["code"] == "not_found"
    response = client.put("/health")
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_missing_user_header_is_401(client: TestClient, keys: object) -> None:
    from tests.api.conftest import auth

    response = client.get("/v1/books", headers=auth(keys.valid, None))  # type: ignore[attr-defined]
    assert response.status_code == 401
    assert response.json()["error"]["field"] == "X-Worldbook-User"
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_x_api_key_header_works(client: TestClient, keys: object) -> None:
    headers = {"X-API-Key": keys.valid, "X-Worldbook-User": "alice"}  # type: ignore[attr-defined]
    assert client.get("/v1/books", headers=headers).status_code == 200
