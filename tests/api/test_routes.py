"""What the routes do: books, entries, ordering, bulk, attachments, import/export, turns, usage."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.api.conftest import LORE, entry_body, new_book
from worldbook.api.app import create_app
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

H = dict[str, str]


def _entries(client: TestClient, headers: H, book_id: object, query: str = "") -> dict:  # type: ignore[type-arg]
    response = client.get(f"/v1/books/{book_id}/entries{query}", headers=headers)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _order(client: TestClient, headers: H, book_id: object) -> list[str]:
    return [e["id"] for e in _entries(client, headers, book_id)["entries"]]


def test_book_lifecycle_and_filters(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, title="Dune lore", tags=["Desert", "spice"])
    other = new_book(client, alice, title="Other")
    mine = client.get("/v1/books?q=dune", headers=alice).json()["books"]
    assert [b["id"] for b in mine] == [book["id"]]
    assert [b["id"] for b in client.get("/v1/books?tag=desert", headers=alice).json()["books"]] == [
        book["id"]
    ]
    trashed = client.delete(f"/v1/books/{book['id']}", headers=alice)
    assert trashed.status_code == 200 and trashed.json()["trashed"] is True
    live = [b["id"] for b in client.get("/v1/books", headers=alice).json()["books"]]
    assert live == [other["id"]]
    trash = client.get("/v1/books?trashed=true", headers=alice).json()["books"]
    assert [b["id"] for b in trash] == [book["id"]]
    restored = client.post(f"/v1/books/{book['id']}/restore", headers=alice)
    assert restored.status_code == 200 and restored.json()["trashed"] is False


def test_entries_crud_tokens_and_canon_cost(client: TestClient, alice: H) -> None:
    book = new_book(client, alice)
    one = client.post(
        f"/v1/books/{book['id']}/entries", json=entry_body(0, canon=True), headers=alice
    ).json()
    two = client.post(f"/v1/books/{book['id']}/entries", json=entry_body(1), headers=alice).json()
    listing = _entries(client, alice, book["id"])
    tokens = {e["id"]: e["tokens"] for e in listing["entries"]}
    assert all(isinstance(n, int) and n > 0 for n in tokens.values())
    assert listing["canon_tokens"] == tokens[one["id"]]
    assert listing["canon_budget"] > 0
    canon = _entries(client, alice, book["id"], "?canon=true")["entries"]
    relevant = _entries(client, alice, book["id"], "?canon=false")["entries"]
    assert [e["id"] for e in canon] == [one["id"]]
    assert [e["id"] for e in relevant] == [two["id"]]
    patched = client.patch(f"/v1/entries/{two['id']}", json={"enabled": False}, headers=alice)
    assert patched.status_code == 200 and patched.json()["enabled"] is False
    disabled = _entries(client, alice, book["id"], "?disabled=true")["entries"]
    assert [e["id"] for e in disabled] == [two["id"]]
    assert client.delete(f"/v1/entries/{two['id']}", headers=alice).status_code == 204
    assert client.get(f"/v1/entries/{two['id']}", headers=alice).status_code == 404


def test_ordering_and_bulk(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=5)
    ids = [e["id"] for e in _entries(client, alice, book["id"])["entries"]]
    moved = client.post(
        f"/v1/books/{book['id']}/entries/move",
        json={"ids": [ids[4], ids[3]], "to": "before", "anchor": ids[0]},
        headers=alice,
    )
    assert moved.status_code == 200 and moved.json() == {"moved": 2}
    assert _order(client, alice, book["id"]) == [ids[3], ids[4], ids[0], ids[1], ids[2]]
    last = client.post(
        f"/v1/books/{book['id']}/entries/move", json={"ids": [ids[3]], "to": "last"}, headers=alice
    )
    assert last.status_code == 200
    assert _order(client, alice, book["id"])[-1] == ids[3]
    no_anchor = client.post(
        f"/v1/books/{book['id']}/entries/move", json={"ids": [ids[3]], "to": "after"}, headers=alice
    )
    assert no_anchor.status_code == 422 and no_anchor.json()["error"]["field"] == "anchor"
    bulk = f"/v1/books/{book['id']}/entries/bulk"
    off = client.post(bulk, json={"action": "disable", "ids": ids[:2]}, headers=alice)
    assert off.json()["changed"] == 2
    assert len(_entries(client, alice, book["id"], "?disabled=true")["entries"]) == 2
    on = client.post(bulk, json={"action": "enable", "ids": ids[:2]}, headers=alice)
    assert on.json()["changed"] == 2
    move = client.post(bulk, json={"action": "move", "ids": [ids[2]], "to": "first"}, headers=alice)
    assert move.json()["changed"] == 1
    assert _order(client, alice, book["id"])[0] == ids[2]
    gone = client.post(bulk, json={"action": "delete", "ids": ids[:3]}, headers=alice)
    assert gone.json()["changed"] == 3
    assert client.get(f"/v1/books/{book['id']}", headers=alice).json()["entry_count"] == 2


def test_sharing_library_and_copy(client: TestClient, alice: H, bob: H) -> None:
    public = new_book(client, alice, title="Shared world", entries=10, visibility="public")
    unlisted = new_book(client, alice, title="Shared secret", entries=1, visibility="unlisted")
    new_book(client, alice, title="Shared private")
    found = client.get("/v1/library?q=shared", headers=bob).json()["books"]
    assert [b["id"] for b in found] == [public["id"]]
    assert client.get(f"/v1/books/{unlisted['id']}", headers=bob).status_code == 200
    copy = client.post(f"/v1/books/{public['id']}/copy", headers=bob)
    assert copy.status_code == 201
    copied = copy.json()
    assert copied["owner_id"] == "bob" and copied["visibility"] == "private"
    assert copied["entry_count"] == 10
    edit = client.patch(f"/v1/books/{copied['id']}", json={"title": "Mine now"}, headers=bob)
    assert edit.status_code == 200
    assert client.get(f"/v1/books/{public['id']}", headers=bob).json()["title"] == "Shared world"
    export = client.get(f"/v1/books/{unlisted['id']}/export?format=sillytavern", headers=bob)
    assert export.status_code == 200 and "entries" in export.json()


def test_attachments_merge_and_dedupe(client: TestClient, alice: H) -> None:
    world = new_book(client, alice, entries=2)
    extra = new_book(client, alice, entries=1)
    for kind, target, book in (
        ("story", "s1", world),
        ("character", "c1", world),
        ("character", "c1", extra),
    ):
        path = f"/v1/attachments/{kind}/{target}/books/{book['id']}"
        assert client.put(path, headers=alice).status_code == 200
    again = client.put(f"/v1/attachments/character/c1/books/{extra['id']}", headers=alice)
    assert again.json()["position"] == 2  # attached twice: one attachment
    listed = client.get("/v1/attachments/character/c1", headers=alice).json()["books"]
    assert [b["id"] for b in listed] == [world["id"], extra["id"]]
    turn = {
        "story_id": "s1",
        "characters": [{"id": "c1", "name": "Ann"}],
        "messages": [{"role": "user", "content": "Hello"}],
    }
    result = client.post("/v1/select", json=turn, headers=alice).json()
    entry_ids = {t["entry_id"] for t in result["trace"] if t["entry_id"]}
    assert len(entry_ids) == 3  # the world book once, though reached twice
    gone = client.delete(f"/v1/attachments/character/c1/books/{extra['id']}", headers=alice)
    assert gone.status_code == 204
    again_gone = client.delete(f"/v1/attachments/character/c1/books/{extra['id']}", headers=alice)
    assert again_gone.status_code == 404


def test_import_multipart_and_raw_then_export(client: TestClient, alice: H) -> None:
    st = (
        b'{"entries": {"0": {"key": ["Arrakis"], "comment": "Arrakis", '
        b'"content": "Arrakis is a desert planet, the only source of spice."}}}'
    )
    multipart = client.post(
        "/v1/books/import", files={"file": ("dune.json", st, "application/json")}, headers=alice
    )
    assert multipart.status_code == 201, multipart.text
    assert multipart.json()["entries"] == 1
    raw = client.post(
        "/v1/books/import?mode=classic",
        content=st,
        headers={**alice, "Content-Type": "application/octet-stream"},
    )
    assert raw.status_code == 201, raw.text
    book_id = raw.json()["book_id"]
    ccv3 = client.get(f"/v1/books/{book_id}/export?format=ccv3", headers=alice)
    assert ccv3.status_code == 200
    assert "Arrakis" in ccv3.text
    bad = client.post(
        "/v1/books/import", content=b"plain text", headers={**alice, "Content-Type": "text/plain"}
    )
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "unsupported_format"


def test_import_over_500_entries_is_refused(client: TestClient, alice: H) -> None:
    entries = ",".join(
        f'"{i}": {{"key": ["k{i}"], "comment": "Entry {i}", "content": "{LORE}"}}'
        for i in range(501)
    )
    response = client.post(
        "/v1/books/import",
        content=('{"entries": {' + entries + "}}").encode(),
        headers={**alice, "Content-Type": "application/json"},
    )
    assert response.status_code == 422
    assert "import batch" in response.json()["error"]["message"]
    assert client.get("/v1/books", headers=alice).json()["books"] == []


def test_select_counts_usage_and_preview_does_not(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=3)
    turn = {"book_ids": [book["id"]], "messages": [{"role": "user", "content": "Hi"}]}
    usage_url = f"/v1/books/{book['id']}/usage"
    preview = client.post(
        "/v1/preview", json={"book_ids": [book["id"]], "message": "Hi"}, headers=alice
    )
    assert preview.status_code == 200
    assert client.get(usage_url, headers=alice).json()["turns"] == 0
    selected = client.post("/v1/select", json={**turn, "supports_tools": True}, headers=alice)
    assert selected.status_code == 200
    assert selected.headers["Server-Timing"].startswith("turn;dur=")
    body = selected.json()
    assert body["whole_books"] == [book["id"]]
    assert body["messages"] and body["anthropic"]["system"]
    usage = client.get(usage_url, headers=alice).json()
    assert usage["turns"] == 1
    assert all(e["total"] == 1 and e["whole_book"] == 1 for e in usage["entries"])
    assert _entries(client, alice, book["id"], "?never_used=true")["entries"] == []


def test_never_surfaced_alert_and_most_used_sort(
    client: TestClient, alice: H, parts: Components
) -> None:
    book = new_book(client, alice, entries=3)
    ids = [e["id"] for e in _entries(client, alice, book["id"])["entries"]]
    # Entry 2 used directly through the store's usage counters (a turn that only named it).
    for _ in range(3):
        parts.services.store.record_turn_usage([str(book["id"])], [(ids[2], "full")])
    usage = client.get(f"/v1/books/{book['id']}/usage", headers=alice).json()
    assert usage["alert_turns"] == 3  # the setting (tests use 3)
    assert [e["entry_id"] for e in usage["never_surfaced"]] == ids[:2]
    later = client.get(f"/v1/books/{book['id']}/usage?alert_turns=4", headers=alice).json()
    assert later["never_surfaced"] == []
    most = _entries(client, alice, book["id"], "?sort=most_used")["entries"]
    assert most[0]["id"] == ids[2] and most[0]["usage"]["total"] == 3
    never = _entries(client, alice, book["id"], "?never_used=true")["entries"]
    assert [e["id"] for e in never] == ids[:2]


def test_lookup_by_title_and_id(client: TestClient, alice: H) -> None:
    book = new_book(client, alice, entries=3)
    ids = [e["id"] for e in _entries(client, alice, book["id"])["entries"]]
    by_title = client.post(
        "/v1/lookup", json={"book_ids": [book["id"]], "title": "entry 1"}, headers=alice
    )
    assert by_title.status_code == 200 and by_title.json()["entry_id"] == ids[1]
    client.patch(f"/v1/entries/{ids[1]}", json={"enabled": False}, headers=alice)
    for body in ({"title": "Entry 1"}, {"entry_id": ids[1]}):
        hidden = client.post("/v1/lookup", json={"book_ids": [book["id"]], **body}, headers=alice)
        assert hidden.status_code == 404  # never a disabled entry


def test_prewarm_caches_the_reply(client: TestClient, alice: H, parts: Components) -> None:
    before = parts.services.query_embeddings.stats().size
    response = client.post("/v1/prewarm", json={"texts": ["The reply.", "  "]}, headers=alice)
    assert response.status_code == 202 and response.json() == {"accepted": 1}
    assert parts.services.prewarm.wait_idle(timeout=30)  # embedded off the request path
    assert parts.services.query_embeddings.stats().size == before + 1


def test_index_status_and_readiness(client: TestClient, alice: H, parts: Components) -> None:
    book = new_book(client, alice, entries=4)
    parts.services.queue.wait_idle(timeout=30)  # type: ignore[attr-defined]
    state = client.get(f"/v1/books/{book['id']}/index", headers=alice).json()
    assert state["entries"] == 4 and state["counts"] == {"indexed": 4}
    assert state["indexed_share"] == 1.0
    ready = client.get("/ready").json()
    assert ready["ready"] is True
    assert ready["parts"]["database"]["up"] and ready["parts"]["queue"]["kind"] == "in-process"
    assert client.get("/health").json() == {"status": "ok"}


def test_ready_is_503_when_the_indexer_is_not_running(tmp_path: Path) -> None:
    config = WorldbookSettings(data_dir=tmp_path, embedder="fake")
    parts = Components(config, embedder=HashingEmbedder(), start_queue=False)
    try:
        with TestClient(create_app(components=parts)) as client:
            response = client.get("/ready")
        assert response.status_code == 503
        body = response.json()
        assert body["ready"] is False
        assert body["parts"]["queue"]["up"] is False and body["parts"]["database"]["up"] is True
    finally:
        parts.close()


def test_entry_listing_shows_usage_to_the_owner_only(
    client: TestClient, alice: H, bob: H, parts: Components
) -> None:
    # Per-entry usage (with last_used_at) describes every reader's turns (ADR 0015).
    book = new_book(client, alice, entries=3, visibility="unlisted")
    path = f"/v1/books/{book['id']}/entries"
    assert all(e["usage"] is not None for e in client.get(path, headers=alice).json()["entries"])
    assert all(e["usage"] is None for e in client.get(path, headers=bob).json()["entries"])


def test_user_name_fills_the_macros_of_a_turn(client: TestClient, alice: H) -> None:
    # Macros (ADR 0012) through HTTP: select, preview and lookup take user_name.
    made = client.post("/v1/books", json={"title": "Sea"}, headers=alice).json()
    entry = {"title": "Loving {{user}}", "lore": "{{user}} is loved by the whole harbour town."}
    client.post(f"/v1/books/{made['id']}/entries", json=entry, headers=alice)
    turn = {"book_ids": [made["id"]], "user_name": "Ari"}
    body = {**turn, "messages": [{"role": "user", "content": "hi"}]}
    selected = client.post("/v1/select", json=body, headers=alice).json()
    assert selected["injected"][0]["text"] == "Ari is loved by the whole harbour town."
    preview = client.post("/v1/preview", json={**turn, "message": "hi"}, headers=alice).json()
    assert preview["injected"][0]["title"] == "Loving Ari"
    found = client.post("/v1/lookup", json={**turn, "title": "Loving Ari"}, headers=alice)
    assert found.status_code == 200 and found.json()["lore"].startswith("Ari is loved")
    entries = client.get(f"/v1/books/{made['id']}/entries", headers=alice).json()["entries"]
    assert entries[0]["title"] == "Loving {{user}}"  # stored as written
