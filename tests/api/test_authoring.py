"""POST /v1/books/generate and /v1/books/{id}/split (docs/design/generate-and-split.md)
through HTTP."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.api.conftest import new_book
from tests.llm_fakes import ScriptedLLM, book, entry
from worldbook.api.routes.authoring import get_llm
from worldbook.errors import LLMRateLimited, LLMTimeout, LLMUnavailable
from worldbook.llm_port import LLM

TEXT = (
    "# Port Vel\nPort Vel is the pirate city of the north.\n\n"
    "# The Drowned Rat\nThe Drowned Rat is the tavern where captains sell maps.\n"
)
NAMES = ["Port Vel", "The Drowned Rat", "Iron Guild", "Salt Queen"]


def use(app: FastAPI, llm: LLM | None) -> None:
    app.dependency_overrides[get_llm] = lambda: llm


def test_generate_without_a_model_is_503_naming_the_setting(
    client: TestClient, alice: dict[str, str]
) -> None:
    response = client.post("/v1/books/generate", json={"premise": "Pirates"}, headers=alice)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "llm_not_configured"
    assert "WORLDBOOK_LLM_URL" in response.json()["error"]["message"]


def test_generate_returns_a_draft_and_saves_nothing(
    app: FastAPI, client: TestClient, alice: dict[str, str]
) -> None:
    use(app, ScriptedLLM([book(*(entry(n) for n in NAMES))]))
    response = client.post(
        "/v1/books/generate", json={"premise": "Pirates", "count": 4}, headers=alice
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert [e["title"] for e in body["entries"]] == NAMES
    assert set(body["entries"][0]) == {"title", "lore", "aliases", "canon"}
    assert client.get("/v1/books", headers=alice).json()["books"] == []


def test_generate_needs_a_key_and_checks_its_fields(
    app: FastAPI, client: TestClient, alice: dict[str, str]
) -> None:
    use(app, ScriptedLLM([]))
    assert client.post("/v1/books/generate", json={"premise": "P"}).status_code == 401
    for body in (
        {"premise": "P", "count": 3},
        {"premise": "P", "count": 17},
        {"premise": "P", "x": 1},
    ):
        assert client.post("/v1/books/generate", json=body, headers=alice).status_code == 422
    too_long = client.post("/v1/books/generate", json={"premise": "p" * 2001}, headers=alice)
    assert too_long.status_code == 422 and "premise" in too_long.json()["error"]["message"]


def test_model_failures_map_to_gateway_statuses(
    app: FastAPI, client: TestClient, alice: dict[str, str]
) -> None:
    cases = [
        (LLMRateLimited("slow down", retry_after=12.2), 429, "13"),
        (LLMUnavailable("down", retry_after=None), 503, "5"),
        (LLMTimeout("too slow"), 504, None),
    ]
    for error, status, retry in cases:
        use(app, ScriptedLLM([error]))
        response = client.post("/v1/books/generate", json={"premise": "P"}, headers=alice)
        assert response.status_code == status
        assert response.headers.get("Retry-After") == retry
    use(app, ScriptedLLM(["nonsense", "nonsense"]))
    response = client.post("/v1/books/generate", json={"premise": "P"}, headers=alice)
    assert response.status_code == 502 and response.json()["error"]["code"] == "llm_bad_reply"


def test_split_dry_run_rebuilds_the_text_and_writes_nothing(
    client: TestClient, alice: dict[str, str]
) -> None:
    created = new_book(client, alice)
    response = client.post(f"/v1/books/{created['id']}/split", json={"text": TEXT}, headers=alice)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [e["title"] for e in body["entries"]] == ["Port Vel", "The Drowned Rat"]
    assert body["method"] == "headings" and body["saved"] is False
    assert body["leading"] + "".join(e["lore"] + e["separator"] for e in body["entries"]) == TEXT
    listed = client.get(f"/v1/books/{created['id']}/entries", headers=alice).json()
    assert listed["entries"] == []


def test_split_save_adds_entries_through_the_normal_path(
    app: FastAPI, client: TestClient, alice: dict[str, str]
) -> None:
    created = new_book(client, alice)
    plan = {"entries": [{"title": "Vel and its tavern", "aliases": ["Vel"], "first": 1, "last": 2}]}
    use(app, ScriptedLLM([plan]))
    response = client.post(
        f"/v1/books/{created['id']}/split", json={"text": TEXT, "save": True}, headers=alice
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["saved"] is True and body["method"] == "llm"
    entry_id = body["entries"][0]["id"]
    stored = client.get(f"/v1/entries/{entry_id}", headers=alice).json()
    assert (stored["title"], stored["lore"], stored["aliases"]) == (
        "Vel and its tavern",
        TEXT.strip(),
        ["Vel"],
    )


def test_split_is_owner_only(
    client: TestClient, alice: dict[str, str], bob: dict[str, str]
) -> None:
    private = new_book(client, alice)
    public = new_book(client, alice, entries=10, visibility="public")
    for created, status in ((private, 404), (public, 403)):
        response = client.post(
            f"/v1/books/{created['id']}/split", json={"text": TEXT, "save": True}, headers=bob
        )
        assert response.status_code == status


def test_split_over_the_limit_is_422_naming_it_and_writes_nothing(
    client: TestClient, alice: dict[str, str]
) -> None:
    created = new_book(client, alice)
    response = client.post(
        f"/v1/books/{created['id']}/split", json={"text": "a" * 40_001, "save": True}, headers=alice
    )
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "limit_exceeded" and "text to split into entries" in error["message"]
    listed = client.get(f"/v1/books/{created['id']}/entries", headers=alice).json()
    assert listed["entries"] == []


def test_split_can_skip_the_model(app: FastAPI, client: TestClient, alice: dict[str, str]) -> None:
    llm = ScriptedLLM([])
    use(app, llm)
    created = new_book(client, alice)
    body = {"text": TEXT, "use_llm": False}
    response = client.post(f"/v1/books/{created['id']}/split", json=body, headers=alice)
    assert response.json()["method"] == "headings" and llm.requests == []


def test_the_apps_model_is_closed_at_shutdown(app: FastAPI) -> None:
    closed: list[bool] = []

    class Closable(ScriptedLLM):
        def close(self) -> None:
            closed.append(True)

    with TestClient(app):
        app.state.llm = Closable([])
    assert closed == [True]
