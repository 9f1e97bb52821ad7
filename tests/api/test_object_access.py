"""Object-level access: ids of another user's objects never work (no IDOR)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import new_book

H = dict[str, str]


def _ids(client: TestClient, headers: H, book: dict[str, object]) -> list[str]:
    listing = client.get(f"/v1/books/{book['id']}/entries", headers=headers).json()
    return [e["id"] for e in listing["entries"]]


def test_bulk_and_move_refuse_entries_of_another_book(client: TestClient, alice: H, bob: H) -> None:
    mine = new_book(client, bob, entries=2)
    theirs = new_book(client, alice, entries=2)
    my_ids, their_ids = _ids(client, bob, mine), _ids(client, alice, theirs)
    for action in ("disable", "delete", "move"):
        body = {"action": action, "ids": [my_ids[0], their_ids[0]]}
        if action == "move":
            body["to"] = "first"
        response = client.post(f"/v1/books/{mine['id']}/entries/bulk", json=body, headers=bob)
        assert response.status_code == 404, response.text
    anchored = client.post(
        f"/v1/books/{mine['id']}/entries/move",
        json={"ids": [my_ids[1]], "to": "before", "anchor": their_ids[0]},
        headers=bob,
    )
    assert anchored.status_code == 404
    # Nothing changed in either book.
    assert _ids(client, alice, theirs) == their_ids
    assert _ids(client, bob, mine) == my_ids
    listing = client.get(f"/v1/books/{theirs['id']}/entries?disabled=true", headers=alice)
    assert listing.json()["entries"] == []


def test_entry_ids_of_private_books_look_missing(client: TestClient, alice: H, bob: H) -> None:
    private = new_book(client, alice, entries=1)
    entry_id = _ids(client, alice, private)[0]
    missing = client.get("/v1/entries/doesnotexist", headers=bob)
    for method, body in (("GET", None), ("PATCH", {"title": "Mine"}), ("DELETE", None)):
        response = client.request(method, f"/v1/entries/{entry_id}", json=body, headers=bob)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == missing.json()["error"]["code"]
    unlisted = new_book(client, alice, entries=1, visibility="unlisted")
    shared_id = _ids(client, alice, unlisted)[0]
    assert client.get(f"/v1/entries/{shared_id}", headers=bob).status_code == 200
    edit = client.patch(f"/v1/entries/{shared_id}", json={"title": "Mine"}, headers=bob)
    assert edit.status_code == 403
    assert client.get(f"/v1/entries/{shared_id}", headers=alice).json()["title"] != "Mine"


def test_private_book_of_another_user_cannot_be_attached_or_used(
    client: TestClient, alice: H, bob: H
) -> None:
    private = new_book(client, alice, entries=1)
    attach = client.put(f"/v1/attachments/character/c1/books/{private['id']}", headers=bob)
    assert attach.status_code == 404
    assert client.get("/v1/attachments/character/c1", headers=bob).json()["books"] == []
    turn = {"book_ids": [private["id"]], "messages": [{"role": "user", "content": "Hi"}]}
    assert client.post("/v1/select", json=turn, headers=bob).status_code == 404
    copy = client.post(f"/v1/books/{private['id']}/copy", headers=bob)
    assert copy.status_code == 404
    export = client.get(f"/v1/books/{private['id']}/export", headers=bob)
    assert export.status_code == 404


def test_attachment_turned_private_is_skipped_not_leaked(
    client: TestClient, alice: H, bob: H
) -> None:
    shared = new_book(client, alice, entries=1, visibility="unlisted")
    assert client.put(f"/v1/attachments/character/c2/books/{shared['id']}", headers=bob).is_success
    client.patch(f"/v1/books/{shared['id']}", json={"visibility": "private"}, headers=alice)
    assert client.get("/v1/attachments/character/c2", headers=bob).json()["books"] == []
    turn = {"characters": [{"id": "c2"}], "messages": [{"role": "user", "content": "Hi"}]}
    result = client.post("/v1/select", json=turn, headers=bob).json()
    assert result["trace"] == [] or all(t["book_id"] != shared["id"] for t in result["trace"])
    assert any("skipped" in note for note in result["notes"])


def test_lookup_only_reaches_the_turns_books(client: TestClient, alice: H, bob: H) -> None:
    turn_book = new_book(client, bob, entries=1)
    outside_mine = new_book(client, bob, entries=1, title="Elsewhere")
    outside_theirs = new_book(client, alice, entries=10, visibility="public")
    for book, headers in ((outside_mine, bob), (outside_theirs, alice)):
        entry_id = _ids(client, headers, book)[0]
        response = client.post(
            "/v1/lookup", json={"book_ids": [turn_book["id"]], "entry_id": entry_id}, headers=bob
        )
        assert response.status_code == 404
    inside = _ids(client, bob, turn_book)[0]
    ok = client.post(
        "/v1/lookup", json={"book_ids": [turn_book["id"]], "entry_id": inside}, headers=bob
    )
    assert ok.status_code == 200 and ok.json()["entry_id"] == inside


def test_usage_statistics_are_the_owners(client: TestClient, alice: H, bob: H) -> None:
    public = new_book(client, alice, entries=10, visibility="public")
    assert client.get(f"/v1/books/{public['id']}/usage", headers=bob).status_code == 403
    assert client.get(f"/v1/books/{public['id']}/usage", headers=alice).status_code == 200
