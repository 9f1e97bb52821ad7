"""Glosses through HTTP (ADR 0023): the reader-languages setting, asking for glosses with and
without a model, who may list, ask and delete, and the whole path with a real OpenAI adapter
talking to the scripted upstream — written by the in-process writer thread, listed as
generated, never exported, found by a turn in the reader's language, and deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import auth, make_components, new_book
from tests.scripted_upstream import Reply, ScriptedUpstream, openai_answer
from worldbook.api.app import create_app
from worldbook.core.glosses import Gloss, gloss_model_id
from worldbook.core.records import EntryRecord
from worldbook.service.components import Components
from worldbook.service.glosses import BookGlossWriter

READERS = "settings.reader_languages"
WOODS = {
    "title": "Le Bois Murmurant",
    "lore": "Dans ce bois les arbres parlent la nuit et les loups se taisent.",
}
MARKET = {"title": "밤 시장", "lore": "밤이면 상인들이 조용히 말하는 시장이다. " * 3}  # in Korean
KOREAN_NAME, KOREAN_GIST = "속삭이는 숲", "밤이면 나무들이 말하는 숲이다."
ASKED_IN_KOREAN = "밤이면 나무들이 말하는 숲이 있다던데, 거기에 가 봤어?"
FILLER = "Harbour records list cargo, tolls and tides each season. "
FILLERS = 60  # English lore around the French entry, as a real book has
MODEL = "scripted-glosser"


def _readers(client: TestClient, headers: dict[str, str], book_id: str, value: object) -> Any:
    return client.patch(
        f"/v1/books/{book_id}", json={"settings": {"reader_languages": value}}, headers=headers
    )


def test_reader_languages_are_a_checked_book_setting(
    client: TestClient, alice: dict[str, str]
) -> None:
    book = new_book(client, alice)
    changed = _readers(client, alice, str(book["id"]), ["ko", "pt"])
    assert changed.status_code == 200, changed.text
    assert changed.json()["settings"]["reader_languages"] == ["ko", "pt"]
    listed = client.get(f"/v1/books/{book['id']}/glosses", headers=alice)
    assert listed.status_code == 200
    assert listed.json() == {"book_id": book["id"], "reader_languages": ["ko", "pt"], "glosses": []}
    for bad in (["ko", "xx"], "ko", [1], ["ar", "de", "el", "es", "fr", "hi", "it", "ja", "ko"]):
        refused = _readers(client, alice, str(book["id"]), bad)
        assert refused.status_code == 422, (bad, refused.text)
        assert refused.json()["error"]["field"].endswith(READERS), bad
    kept = client.get(f"/v1/books/{book['id']}", headers=alice).json()
    assert kept["settings"]["reader_languages"] == ["ko", "pt"]  # a refused change changes nothing


def test_asking_for_glosses_needs_reader_languages_then_a_model(
    client: TestClient, alice: dict[str, str], parts: Components
) -> None:
    assert parts.services.gloss_queue is None  # no WORLDBOOK_LLM_URL in these tests
    book_id = str(new_book(client, alice, entries=2)["id"])
    url = f"/v1/books/{book_id}/glosses"
    none = client.post(url, headers=alice)
    assert none.status_code == 422, none.text
    assert none.json()["error"]["field"] == READERS
    assert "reader_languages" in none.json()["error"]["message"]
    assert _readers(client, alice, book_id, ["ko"]).status_code == 200
    no_model = client.post(url, headers=alice)
    assert no_model.status_code == 503, no_model.text
    assert "WORLDBOOK_LLM_URL" in no_model.json()["error"]["message"]
    # Deleting what was never written is no error.
    assert client.delete(url, headers=alice).json() == {"book_id": book_id, "deleted": 0}


@pytest.mark.parametrize(("visibility", "other"), [("private", 404), ("unlisted", 403)])
def test_only_the_owner_asks_for_or_deletes_glosses(
    client: TestClient,
    alice: dict[str, str],
    bob: dict[str, str],
    visibility: str,
    other: int,
) -> None:
    """Another user is answered as for any owner-only route: 404 for a book they cannot see
    (ids cannot be probed), 403 for one they see; they list a visible book's glosses."""
    book = new_book(client, alice, entries=1, visibility=visibility)
    url = f"/v1/books/{book['id']}/glosses"
    assert _readers(client, alice, str(book["id"]), ["ko"]).status_code == 200
    assert client.post(url, headers=bob).status_code == other
    assert client.delete(url, headers=bob).status_code == other
    assert client.get(url, headers=bob).status_code == (200 if visibility == "unlisted" else 404)


def store_entry(parts: Components, book_id: str, entry_id: str) -> EntryRecord:
    return parts.services.store.get_entries(book_id, [entry_id])[0]


def test_without_a_model_indexing_embeds_the_glosses_already_stored(
    client: TestClient, alice: dict[str, str], parts: Components
) -> None:
    """Glosses a model wrote earlier (or under another embedder) lack this embedder's vectors;
    the in-process indexer embeds them with the next indexing of their book, asking no model."""
    book_id = str(new_book(client, alice)["id"])
    assert _readers(client, alice, book_id, ["ko"]).status_code == 200
    fillers = [{"title": f"Ledger {i}", "lore": FILLER * (i % 3 + 8)} for i in range(FILLERS)]
    body = {"entries": [WOODS, *fillers, MARKET]}
    added = client.post(f"/v1/books/{book_id}/entries/batch", json=body, headers=alice)
    assert added.status_code == 201, added.text
    woods = store_entry(parts, book_id, added.json()[0]["id"])
    queue = parts.services.queue
    assert queue.wait_idle(60)  # type: ignore[attr-defined]
    store = parts.services.store
    view = gloss_model_id(parts.services.model_id, "ko")
    stored = Gloss(woods.id, "ko", KOREAN_NAME, KOREAN_GIST, woods.content_hash, "earlier")
    assert store.save_glosses(book_id, [stored]) == 1
    assert list(store.load_book_vectors(book_id, view).entry_ids) == []
    assert _injected(client, parts, alice, book_id, ASKED_IN_KOREAN) == [MARKET["title"]]

    one_more = {"title": "Ledger extra", "lore": FILLER * 8}
    assert client.post(f"/v1/books/{book_id}/entries", json=one_more, headers=alice).is_success
    assert queue.wait_idle(60)  # type: ignore[attr-defined]
    jobs = parts.gloss_jobs
    assert isinstance(jobs, BookGlossWriter) and parts.services.gloss_queue is None
    assert jobs.wait_idle(60)  # the embed-only writer the indexer handed the book to
    assert list(store.load_book_vectors(book_id, view).entry_ids) == [woods.id]
    assert WOODS["title"] in _injected(client, parts, alice, book_id, ASKED_IN_KOREAN)


# --- with a model: the real OpenAI adapter against the scripted upstream ----------------------


@dataclass
class Glossing:
    client: TestClient
    parts: Components
    upstream: ScriptedUpstream
    headers: dict[str, str]

    @property
    def writer(self) -> BookGlossWriter:
        queue = self.parts.services.gloss_queue
        assert isinstance(queue, BookGlossWriter)  # the in-process writer thread
        return queue

    def settle(self) -> None:
        """Wait for the indexer, then for the gloss writer it hands indexed books to."""
        assert self.parts.services.queue.wait_idle(60)  # type: ignore[attr-defined]
        assert self.writer.wait_idle(60)

    def injected(self, book_id: str, text: str) -> list[str]:
        return _injected(self.client, self.parts, self.headers, book_id, text)


def _injected(
    client: TestClient, parts: Components, headers: dict[str, str], book_id: str, text: str
) -> list[str]:
    """What a turn of ``text`` injects, once the gloss view's rebuilds have landed (an
    invalidated index keeps serving its previous build until then, ADR 0008)."""
    views = parts.services.glosses
    assert views is not None
    assert views.index("ko").wait_idle(30)  # type: ignore[attr-defined]
    turn = {
        "book_ids": [book_id],
        "messages": [{"role": "user", "content": text}],
        "input_window": 8192,
    }
    selected = client.post("/v1/select", json=turn, headers=headers)
    assert selected.status_code == 200, selected.text
    return [e["title"] for e in selected.json()["injected"]]


@pytest.fixture
def glossing(tmp_path: Path) -> Iterator[Glossing]:
    upstream = ScriptedUpstream().start()
    model = {"llm_url": upstream.base_url, "llm_model": MODEL}
    try:
        with closing(make_components(tmp_path, llm_max_retries=0, **model)) as parts:
            _, key = parts.services.store.create_api_key("tests")
            with TestClient(create_app(components=parts), raise_server_exceptions=False) as client:
                yield Glossing(client, parts, upstream, auth(key, "alice"))
    finally:
        upstream.stop()


def _text(data: object) -> str:
    """JSON as text with its characters unescaped (so Korean text can be looked for)."""
    return json.dumps(data, ensure_ascii=False)


def _gloss_reply(name: str, gist: str) -> Reply:
    glosses = {"glosses": [{"language": "ko", "name": name, "gist": gist}]}
    return Reply(body=openai_answer(json.dumps(glosses, ensure_ascii=False)))


def test_glosses_written_by_the_model_are_listed_searched_never_exported_and_deleted(
    glossing: Glossing,
) -> None:
    g = glossing
    client, alice = g.client, g.headers
    book_id = str(new_book(client, alice)["id"])
    fillers = [
        {"title": f"Ledger {i}", "lore": FILLER * (i % 3 + 8) + "Tally. " * (i // 3)}
        for i in range(FILLERS)
    ]
    body = {"entries": [WOODS, *fillers, MARKET]}
    added = client.post(f"/v1/books/{book_id}/entries/batch", json=body, headers=alice)
    assert added.status_code == 201, added.text
    woods_id = added.json()[0]["id"]
    g.settle()
    # Indexing handed the book to the writer, which asked nothing: no reader languages yet.
    assert g.upstream.seen == []
    assert _readers(client, alice, book_id, ["ko"]).status_code == 200
    assert g.injected(book_id, ASKED_IN_KOREAN) == [MARKET["title"]]

    # One call per entry not written in Korean, in list order: the French entry is glossed in
    # Korean; every English filler is answered in English, as a small model often does, and
    # dropped; the Korean market needs no Korean gloss.
    g.upstream.queue(_gloss_reply(KOREAN_NAME, KOREAN_GIST))
    g.upstream.queue(*[_gloss_reply("Harbour ledger", "A ledger of the harbour.")] * FILLERS)
    queued = client.post(f"/v1/books/{book_id}/glosses", headers=alice)
    assert queued.status_code == 202, queued.text
    assert queued.json() == {"book_id": book_id, "reader_languages": ["ko"], "queued": True}
    assert g.writer.wait_idle(60)
    assert len(g.upstream.seen) == 1 + FILLERS and not g.upstream.replies
    first = g.upstream.seen[0]
    assert first.path == "/v1/chat/completions" and first.body["model"] == MODEL
    assert first.body["response_format"]["type"] == "json_schema"
    asked = first.body["messages"][-1]["content"]
    assert f"Title: {WOODS['title']}" in asked and "ko (Korean)" in asked

    listed = client.get(f"/v1/books/{book_id}/glosses", headers=alice)
    assert listed.status_code == 200
    assert listed.json() == {
        "book_id": book_id,
        "reader_languages": ["ko"],
        "glosses": [
            {
                "entry_id": woods_id,
                "entry_title": WOODS["title"],
                "language": "ko",
                "name": KOREAN_NAME,
                "gist": KOREAN_GIST,
                "model": MODEL,
                "generated": True,
            }
        ],
    }
    store = g.parts.services.store
    view = gloss_model_id(g.parts.services.model_id, "ko")
    assert list(store.load_book_vectors(book_id, view).entry_ids) == [woods_id]
    # A turn in Korean now finds the French entry through its gloss.
    assert WOODS["title"] in g.injected(book_id, ASKED_IN_KOREAN)

    # A generated view, never the author's: no export carries it, entries do not show it.
    for fmt in ("sillytavern", "ccv3"):
        exported = client.get(f"/v1/books/{book_id}/export?format={fmt}", headers=alice)
        assert exported.status_code == 200
        assert WOODS["lore"] in _text(exported.json())  # the author's lore is exported
        assert KOREAN_NAME not in _text(exported.json())
        assert KOREAN_GIST not in _text(exported.json())
    entries = client.get(f"/v1/books/{book_id}/entries", headers=alice).json()
    assert KOREAN_NAME not in _text(entries)

    # Asking again asks only for what is still missing (the dropped fillers) and keeps it.
    g.upstream.queue(*[_gloss_reply("Harbour ledger", "A ledger of the harbour.")] * FILLERS)
    assert client.post(f"/v1/books/{book_id}/glosses", headers=alice).status_code == 202
    assert g.writer.wait_idle(60)
    assert len(g.upstream.seen) == 1 + 2 * FILLERS
    assert len(client.get(f"/v1/books/{book_id}/glosses", headers=alice).json()["glosses"]) == 1

    other = client.delete(f"/v1/books/{book_id}/glosses?language=pt", headers=alice)
    assert other.json() == {"book_id": book_id, "deleted": 0}
    gone = client.delete(f"/v1/books/{book_id}/glosses?language=ko", headers=alice)
    assert gone.status_code == 200
    assert gone.json() == {"book_id": book_id, "deleted": 1}
    assert client.get(f"/v1/books/{book_id}/glosses", headers=alice).json()["glosses"] == []
    assert list(store.load_book_vectors(book_id, view).entry_ids) == []
    assert g.injected(book_id, ASKED_IN_KOREAN) == [MARKET["title"]]
