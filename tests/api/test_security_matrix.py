"""The access matrix: every route × {owner, another user, no key, revoked key} × {private,
unlisted, public, trashed book}. The route list comes from ``app.routes``, so a new route
without a row here fails ``test_every_route_has_a_matrix_row``.

Expected statuses follow worldbook.service.access: a book the caller may not see is 404 (never
403, so ids cannot be probed); a book they see but do not own is 403 on edits; a trashed book
is seen only by its owner and used by nobody; no or a revoked key is 401 everywhere under /v1.
Attachments belong to the user who made them: only they list or detach them.

Existence must not leak (DESIGN §5): where another user gets a 404 for a book they may not see,
the whole answer — status, body and headers — is the answer for an id that never existed (the
id itself echoed in the message is the only difference, and ids have one length).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.api.conftest import LORE, Keys, auth
from worldbook.core.connections import ConnectionSpec
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.living import LivingLimits
from worldbook.core.living_calls import CallContext, parse_call
from worldbook.core.store_rules import new_id
from worldbook.service.components import Components

ACTORS = ("no_key", "revoked_key", "other_user", "owner")  # the owner last: it may mutate
STATES = ("private", "unlisted", "public", "trashed")


@dataclass
class World:
    """One owner's book in one state, with entries, an attachment and a second entry."""

    book_id: str
    entry_ids: list[str]
    target_id: str
    state: str
    write_id: str = ""  # a live living-world write
    trashed_entry_id: str = ""  # an entry in the book's trash (its create was undone)
    ghost: bool = False  # ids that never existed, same shapes

    def as_ghost(self) -> World:
        entries = [new_id() for _ in self.entry_ids]
        return World(new_id(), entries, self.target_id, self.state, new_id(), new_id(), ghost=True)

    def ids(self) -> list[str]:
        return [self.book_id, *self.entry_ids, self.write_id, self.trashed_entry_id]


def _living_writes(parts: Components, book_id: str) -> tuple[str, str]:
    """A live write and a trashed entry (made by a create that was undone)."""
    store = parts.services.store

    def create(call_id: str, title: str) -> str:
        ctx = CallContext(book_id, "chat-matrix", "m-matrix", call_id)
        call = parse_call(ctx, "lore_create", {"title": title, "lore": LORE})
        return store.record_write(call, limits=LivingLimits()).write.id

    live = create("call-1", "Matrix Place")
    gone = store.undo_write(create("call-2", "Matrix Gone")).trashed_entry_id
    assert gone is not None
    return live, gone


def build_world(parts: Components, state: str, tag: str) -> World:
    store = parts.services.store
    draft = BookDraft(title=f"World {tag}", tags=["matrix"], settings={"living_world": True})
    book = store.create_book("owner", draft)
    drafts = [EntryDraft(title=f"Topic {i}", lore=f"{LORE} #{i}") for i in range(10)]
    ids = [e.id for e in store.add_entries(book.id, drafts)]
    write_id, trashed_id = _living_writes(parts, book.id)
    visibility = "public" if state == "trashed" else state
    if visibility != "private":
        store.update_book(book.id, visibility=visibility)
    target_id = f"char-{tag}"
    store.attach(book.id, "character", target_id, "owner")
    if state == "trashed":
        store.trash_book(book.id)
    return World(book.id, ids, target_id, state, write_id, trashed_id)


Request = tuple[str, dict[str, Any]]  # (path, httpx keyword arguments)


@dataclass(frozen=True)
class Row:
    """How to call one route against a world, what success is, and which access rule applies.

    rule: free (no book involved) | view (seen: owner always, others if unlisted/public) |
    use (seen and not trashed) | own (owner, not trashed) | own_any (owner, also trashed) |
    attacher (only its maker) | proxy (a connection token only: every API key is 401).
    """

    rule: str
    ok: int
    call: Callable[[World, Components], Request]
    notes: str = field(default="")


def _turn(w: World, **extra: Any) -> dict[str, Any]:
    return {"book_ids": [w.book_id], **extra}


def _reattach(w: World, parts: Components) -> None:
    if w.state != "trashed" and not w.ghost:
        parts.services.store.attach(w.book_id, "character", w.target_id, "owner")


def _detach(w: World, parts: Components) -> Request:
    _reattach(w, parts)
    return f"/v1/attachments/character/{w.target_id}/books/{w.book_id}", {}


def _logged_chat(w: World, parts: Components) -> Request:
    """The owner's chat has a logged turn with the world's book; another user reading the same
    chat id reads their own chat (empty), never the owner's."""
    record = {
        "messages": 1,
        "chat_length": 1,
        "books": [{"book_id": w.book_id, "title": "World", "mode": "world", "character": None}],
        "budgets": {"canon": {"budget": 1, "tokens": 0}},
        "injected": [
            {
                "entry_id": w.entry_ids[0],
                "book_id": w.book_id,
                "title": "Topic 0",
                "reason": "canon",
                "via": "canon",
                "tokens": 1,
                "role": "system",
            }
        ],
        "index": [],
        "left_out": [],
        "notes": [],
    }
    chat = f"chat-{w.book_id}"
    parts.services.store.record_chat_turn("owner", chat, states={}, log=record)
    return f"/v1/chats/{chat}/log", {}


def _connection(w: World, parts: Components) -> Request:
    """A connection of the owner's (ADR 0017), made fresh for each caller."""
    spec = ConnectionSpec("App", "openai", "http://127.0.0.1:9/v1", book_ids=(w.book_id,))
    record, _ = parts.services.store.create_connection("owner", spec, None)
    return f"/v1/connections/{record.id}", {}


def _proxy(path: str) -> Callable[[World, Components], Request]:
    """A proxied turn sent with the caller's API key: API keys never open the proxy."""
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    return lambda w, p: (path, {"json": body})


def _at(path: str, **request: Any) -> Callable[[World, Components], Request]:
    """A call to ``path``, a template filled from the world (``/v1/books/{w.book_id}``), with
    the same httpx keyword arguments every time (copied: ``_call`` pops its headers)."""
    return lambda w, p: (path.format(w=w), dict(request))


_IMPORT = (
    b'{"entries": {"0": {"key": ["x"], "comment": "Imported", '
    b'"content": "An imported entry with enough lore."}}}'
)

MATRIX: dict[tuple[str, str], Row] = {
    ("POST", "/v1/books"): Row("free", 201, _at("/v1/books", json={"title": "T"})),
    ("GET", "/v1/books"): Row("free", 200, _at("/v1/books")),
    ("GET", "/v1/books/{book_id}"): Row("view", 200, _at("/v1/books/{w.book_id}")),
    ("PATCH", "/v1/books/{book_id}"): Row(
        "own", 200, _at("/v1/books/{w.book_id}", json={"description": "new"})
    ),
    ("DELETE", "/v1/books/{book_id}"): Row("own", 200, _at("/v1/books/{w.book_id}")),
    ("POST", "/v1/books/{book_id}/restore"): Row(
        "own_any", 200, _at("/v1/books/{w.book_id}/restore")
    ),
    ("POST", "/v1/books/{book_id}/copy"): Row("use", 201, _at("/v1/books/{w.book_id}/copy")),
    ("GET", "/v1/library"): Row("free", 200, _at("/v1/library?tag=matrix")),
    ("POST", "/v1/books/{book_id}/entries"): Row(
        "own", 201, _at("/v1/books/{w.book_id}/entries", json={"title": "New", "lore": LORE})
    ),
    ("POST", "/v1/books/{book_id}/entries/batch"): Row(
        "own",
        201,
        _at(
            "/v1/books/{w.book_id}/entries/batch",
            json={"entries": [{"title": "New", "lore": LORE}]},
        ),
    ),
    ("GET", "/v1/books/{book_id}/entries"): Row("view", 200, _at("/v1/books/{w.book_id}/entries")),
    ("GET", "/v1/entries/{entry_id}"): Row("view", 200, _at("/v1/entries/{w.entry_ids[0]}")),
    ("PATCH", "/v1/entries/{entry_id}"): Row(
        "own", 200, _at("/v1/entries/{w.entry_ids[0]}", json={"canon": True})
    ),
    ("DELETE", "/v1/entries/{entry_id}"): Row("own", 204, _at("/v1/entries/{w.entry_ids[0]}")),
    ("POST", "/v1/books/{book_id}/entries/move"): Row(
        "own",
        200,
        lambda w, p: (
            f"/v1/books/{w.book_id}/entries/move",
            {"json": {"ids": [w.entry_ids[3]], "to": "first"}},
        ),
    ),
    ("POST", "/v1/books/{book_id}/entries/bulk"): Row(
        "own",
        200,
        lambda w, p: (
            f"/v1/books/{w.book_id}/entries/bulk",
            {"json": {"action": "disable", "ids": w.entry_ids[:2]}},
        ),
    ),
    ("PUT", "/v1/attachments/{target_kind}/{target_id}/books/{book_id}"): Row(
        "use", 200, _at("/v1/attachments/story/s-{w.book_id}/books/{w.book_id}")
    ),
    ("DELETE", "/v1/attachments/{target_kind}/{target_id}/books/{book_id}"): Row(
        "attacher", 204, _detach, notes="only the user who attached it detaches it"
    ),
    ("GET", "/v1/attachments/{target_kind}/{target_id}"): Row(
        "free", 200, _at("/v1/attachments/character/{w.target_id}")
    ),
    ("POST", "/v1/books/import"): Row(
        "free",
        201,
        _at("/v1/books/import", content=_IMPORT, headers={"Content-Type": "application/json"}),
    ),
    ("GET", "/v1/books/{book_id}/export"): Row(
        "view", 200, _at("/v1/books/{w.book_id}/export?format=ccv3")
    ),
    ("POST", "/v1/select"): Row(
        "use",
        200,
        lambda w, p: (
            "/v1/select",
            {"json": _turn(w, messages=[{"role": "user", "content": "Hi"}])},
        ),
    ),
    ("POST", "/v1/preview"): Row(
        "use", 200, lambda w, p: ("/v1/preview", {"json": _turn(w, message="Topic 1?")})
    ),
    ("POST", "/v1/lookup"): Row(
        "use", 200, lambda w, p: ("/v1/lookup", {"json": _turn(w, entry_id=w.entry_ids[5])})
    ),
    ("POST", "/v1/prewarm"): Row("free", 202, _at("/v1/prewarm", json={"texts": ["A reply."]})),
    ("GET", "/v1/books/{book_id}/usage"): Row("own_any", 200, _at("/v1/books/{w.book_id}/usage")),
    ("GET", "/v1/books/{book_id}/usage/daily"): Row(
        "own_any", 200, _at("/v1/books/{w.book_id}/usage/daily?days=7")
    ),
    ("GET", "/v1/books/{book_id}/index"): Row("view", 200, _at("/v1/books/{w.book_id}/index")),
    # Glosses (ADR 0023): read by whoever sees the book, asked for and deleted by its owner.
    ("GET", "/v1/books/{book_id}/glosses"): Row("view", 200, _at("/v1/books/{w.book_id}/glosses")),
    ("POST", "/v1/books/{book_id}/glosses"): Row(
        "own",
        422,  # the world's book names no settings.reader_languages (checked after ownership)
        _at("/v1/books/{w.book_id}/glosses"),
    ),
    ("DELETE", "/v1/books/{book_id}/glosses"): Row(
        "own", 200, _at("/v1/books/{w.book_id}/glosses?language=ko")
    ),
    ("POST", "/v1/books/generate"): Row(
        "free",
        503,  # no language model is configured in these tests: 503 naming WORLDBOOK_LLM_URL
        _at("/v1/books/generate", json={"premise": "A drowned coast"}),
    ),
    ("POST", "/v1/books/{book_id}/split"): Row(
        "own", 200, _at("/v1/books/{w.book_id}/split", json={"text": LORE})
    ),
    ("GET", "/v1/chats/{chat_id}/log"): Row(
        "free", 200, _logged_chat, notes="a chat is its user's; see test_chat_log_access"
    ),
    # The living world (ADR 0006).
    ("POST", "/v1/writes"): Row(
        "own",
        201,
        lambda w, p: (
            "/v1/writes",
            {
                "json": {
                    "book_id": w.book_id,
                    "chat_id": "chat-matrix",
                    "message_id": "m-matrix-2",
                    "call_id": "call-new",
                    "tool": "lore_create",
                    "arguments": {"title": "New Place", "lore": LORE},
                }
            },
        ),
    ),
    ("POST", "/v1/writes/{write_id}/undo"): Row("own", 200, _at("/v1/writes/{w.write_id}/undo")),
    ("DELETE", "/v1/chats/{chat_id}/messages/{message_id}/writes"): Row(
        "free",
        200,
        _at("/v1/chats/chat-matrix/messages/m-matrix/writes"),
        notes="undoes only the caller's own books' writes",
    ),
    ("GET", "/v1/books/{book_id}/writes"): Row("own_any", 200, _at("/v1/books/{w.book_id}/writes")),
    ("GET", "/v1/books/{book_id}/entries/trash"): Row(
        "own_any", 200, _at("/v1/books/{w.book_id}/entries/trash")
    ),
    ("POST", "/v1/entries/{entry_id}/restore"): Row(
        "own", 200, _at("/v1/entries/{w.trashed_entry_id}/restore")
    ),
    # Proxy connections and the proxy (ADR 0017): a connection is its maker's.
    ("POST", "/v1/connections"): Row(
        "free",
        201,
        lambda w, p: (
            "/v1/connections",
            {"json": {"name": "A", "upstream_url": "http://127.0.0.1:9/v1", "book_ids": ["b"]}},
        ),
    ),
    ("GET", "/v1/connections"): Row("free", 200, _at("/v1/connections")),
    ("POST", "/v1/connections/{connection_id}/rotate"): Row(
        "attacher", 200, lambda w, p: (_connection(w, p)[0] + "/rotate", {})
    ),
    ("DELETE", "/v1/connections/{connection_id}"): Row("attacher", 200, _connection),
    ("POST", "/openai/v1/chat/completions"): Row("proxy", 0, _proxy("/openai/v1/chat/completions")),
    ("GET", "/openai/v1/models"): Row("proxy", 0, _at("/openai/v1/models")),
    ("POST", "/anthropic/v1/messages"): Row("proxy", 0, _proxy("/anthropic/v1/messages")),
    ("GET", "/anthropic/v1/models"): Row("proxy", 0, _at("/anthropic/v1/models")),
}

PUBLIC = {
    ("GET", "/health"),
    ("GET", "/ready"),
    ("GET", "/openapi.json"),
    ("GET", "/docs"),
    ("GET", "/docs/oauth2-redirect"),
    ("GET", "/redoc"),
    ("GET", "/ui"),  # the lore inspector's page (static files under /ui/; no data without a key)
    ("GET", "/v1/limits"),  # the DESIGN §6 limits in force: the same for every caller
}


def expected(rule: str, ok: int, actor: str, state: str) -> int:
    if rule == "proxy":  # only a connection token opens the proxy (test_proxy_access.py)
        return 401
    if actor in ("no_key", "revoked_key"):
        return 401
    if rule == "free":
        return ok
    owner = actor == "owner"
    seen_by_others = state in ("unlisted", "public")
    if rule == "view":
        return ok if owner or seen_by_others else 404
    if rule == "use":
        return ok if (owner and state != "trashed") or seen_by_others else 404
    if rule in ("own", "own_any"):
        if owner:
            return ok if state != "trashed" or rule == "own_any" else 404
        return 403 if seen_by_others else 404
    if rule == "attacher":  # the owner made the attachment; nobody else has one to remove
        return ok if owner else 404
    raise AssertionError(f"unknown rule {rule}")


def headers_for(actor: str, keys: Keys) -> dict[str, str]:
    return {
        "no_key": auth(None, "owner"),
        "revoked_key": auth(keys.revoked, "owner"),
        "other_user": auth(keys.valid, "mallory"),
        "owner": auth(keys.valid, "owner"),
    }[actor]


def route_keys(app: FastAPI) -> set[tuple[str, str]]:
    """Every (method, path) the app serves: its plain routes (the docs) plus every API route.

    API routes are read from the app's own OpenAPI document, which FastAPI builds from
    ``app.routes`` including mounted routers (FastAPI ≥0.16x keeps included routers as lazy
    ``_IncludedRouter`` objects whose paths are internal); ``include_in_schema=False`` is
    refused below so no route can hide from this list.
    """
    found: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, APIRoute):
            assert route.include_in_schema, f"{route.path} is hidden from the schema"
        methods = getattr(route, "methods", None) or set()
        for method in methods - {"HEAD", "OPTIONS"}:
            found.add((method, getattr(route, "path", "")))
    for path, operations in app.openapi()["paths"].items():
        found.update((method.upper(), path) for method in operations)
    return found


def test_every_route_has_a_matrix_row(app: FastAPI) -> None:
    routes = route_keys(app)
    assert routes - set(MATRIX) - PUBLIC == set(), "add a MATRIX row for each new route"
    assert set(MATRIX) - routes == set(), "MATRIX names a route that no longer exists"
    assert PUBLIC - routes == set()


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("route", sorted(MATRIX), ids=lambda r: f"{r[0]} {r[1]}")
def test_access_matrix(
    route: tuple[str, str], state: str, client: TestClient, parts: Components, keys: Keys
) -> None:
    row = MATRIX[route]
    world = build_world(parts, state, tag=f"{state}-{abs(hash(route))}")
    got: dict[str, int] = {}
    for actor in ACTORS:
        response = _call(client, route, row, world, parts, actor, keys)
        got[actor] = response.status_code
        if response.status_code >= 400:
            shape = {"type", "error"} if route[1].startswith("/anthropic/") else {"error"}
            assert set(response.json()) == shape, response.text
        if response.status_code == 404 and actor == "other_user" and state in HIDDEN:
            ghost = world.as_ghost()
            never = _call(client, route, row, ghost, parts, actor, keys)
            assert never.status_code == 404
            seen = response.text
            for real, fake in zip(world.ids(), ghost.ids(), strict=True):
                seen = seen.replace(real, fake)
            assert seen == never.text, "a hidden book answers unlike a missing one"
            assert _headers(response) == _headers(never)
    want = {actor: expected(row.rule, row.ok, actor, state) for actor in ACTORS}
    assert got == want


HIDDEN = ("private", "trashed")  # states in which another user may not see the book


def _call(
    client: TestClient,
    route: tuple[str, str],
    row: Row,
    world: World,
    parts: Components,
    actor: str,
    keys: Keys,
) -> Any:
    path, kwargs = row.call(world, parts)
    # One request id for every call: answers echo it (ADR 0018), so a hidden book's answer
    # and a missing one's still match header for header.
    headers = {**headers_for(actor, keys), "X-Request-Id": "matrix", **kwargs.pop("headers", {})}
    return client.request(route[0], path, headers=headers, **kwargs)


def _headers(response: Any) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower() != "date"}


@pytest.mark.parametrize(
    "path", ["/health", "/ready", "/openapi.json", "/docs", "/ui/", "/v1/limits"]
)
def test_public_routes_need_no_key(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 200


@pytest.mark.parametrize("state", STATES)
def test_global_attachments_belong_to_their_user(
    state: str, client: TestClient, parts: Components, keys: Keys
) -> None:
    """``global/{user}``: a user attaches books for their own turns only; another user's global
    attachment never reaches them, and nobody attaches globally for someone else."""
    world = build_world(parts, state, tag=f"global-{state}")
    book = world.book_id
    for actor, user, other in (("owner", "owner", "mallory"), ("other_user", "mallory", "owner")):
        headers = headers_for(actor, keys)
        mine = client.put(f"/v1/attachments/global/{user}/books/{book}", headers=headers)
        assert mine.status_code == expected("use", 200, actor, state), (actor, mine.text)
        theirs = client.put(f"/v1/attachments/global/{other}/books/{book}", headers=headers)
        assert theirs.status_code == 403, (actor, theirs.text)
        assert theirs.json()["error"]["field"] == "target_id"
        turn = {"characters": [{"id": "nobody"}], "messages": [{"role": "user", "content": "Hi"}]}
        got = client.post("/v1/select", json=turn, headers=headers)
        assert got.status_code == 200, got.text
        books = {r["book_id"] for r in got.json()["trace"]}
        assert (book in books) == (mine.status_code == 200), (actor, state)
        listed = client.get(f"/v1/attachments/global/{user}", headers=headers).json()
        assert [b["id"] for b in listed["books"]] == ([book] if mine.status_code == 200 else [])
    for actor in ("no_key", "revoked_key"):
        put = client.put(
            f"/v1/attachments/global/owner/books/{book}", headers=headers_for(actor, keys)
        )
        assert put.status_code == 401
