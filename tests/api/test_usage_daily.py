"""GET /v1/books/{id}/usage/daily: served turns per UTC day for the inspector's usage chart."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from tests.api.conftest import new_book


def _turn(client: TestClient, headers: dict[str, str], book_id: object, path: str) -> None:
    body: dict[str, object] = {"book_ids": [book_id]}
    if path == "/v1/select":
        body["messages"] = [{"role": "user", "content": "Tell me about Entry 1."}]
    else:
        body["message"] = "Tell me about Entry 1."
    response = client.post(path, json=body, headers=headers)
    assert response.status_code == 200, response.text


def test_daily_turns_count_real_turns_not_previews(
    client: TestClient, alice: dict[str, str]
) -> None:
    book = new_book(client, alice, entries=3)
    for _ in range(3):
        _turn(client, alice, book["id"], "/v1/select")
    _turn(client, alice, book["id"], "/v1/preview")  # a preview is not usage (DESIGN §2 rule 8)
    got = client.get(f"/v1/books/{book['id']}/usage/daily", headers=alice)
    assert got.status_code == 200, got.text
    body = got.json()
    today = datetime.now(UTC).date()
    assert body["book_id"] == book["id"]
    assert len(body["days"]) == 30
    assert body["days"][-1] == {"day": today.isoformat(), "turns": 3}
    assert body["days"][0]["day"] == (today - timedelta(days=29)).isoformat()
    assert sum(d["turns"] for d in body["days"]) == 3


def test_daily_window_is_bounded(client: TestClient, alice: dict[str, str]) -> None:
    book = new_book(client, alice)
    week = client.get(f"/v1/books/{book['id']}/usage/daily?days=7", headers=alice)
    assert [d["turns"] for d in week.json()["days"]] == [0] * 7
    for bad in (0, 367):
        refused = client.get(f"/v1/books/{book['id']}/usage/daily?days={bad}", headers=alice)
        assert refused.status_code == 422
        assert refused.json()["error"]["field"] == "query.days"


def test_daily_turns_are_the_owners_only(
    client: TestClient, alice: dict[str, str], bob: dict[str, str]
) -> None:
    public = new_book(client, alice, entries=10, visibility="public")
    seen = client.get(f"/v1/books/{public['id']}/usage/daily", headers=bob)
    assert seen.status_code == 403  # bob sees the book but its readers' turns are alice's
    private = new_book(client, alice)
    hidden = client.get(f"/v1/books/{private['id']}/usage/daily", headers=bob)
    assert hidden.status_code == 404
