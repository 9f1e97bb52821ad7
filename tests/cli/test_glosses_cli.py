"""``worldbook glosses write|list|delete`` (ADR 0023) on a fresh SQLite file with the fake
embedder; ``write`` talks to the scripted OpenAI-compatible upstream through the real adapter."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.scripted_upstream import Reply, ScriptedUpstream, openai_answer
from worldbook.adapters.store import SqlStore, open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.glosses import Gloss, gloss_model_id
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

WOODS = EntryDraft(
    title="Le Bois Murmurant",
    lore="Dans ce bois les arbres parlent la nuit et les loups se taisent.",
)
HARBOUR = EntryDraft(
    title="Harbour ledger", lore="Harbour records list cargo, tolls and tides each season. " * 4
)
KO_NAME, KO_GIST = "속삭이는 숲", "밤이면 나무들이 말하는 숲이다."
PT_NAME, PT_GIST = "Bosque Sussurrante", "Um bosque onde as árvores falam durante a noite."
MODEL = "scripted-glosser"


@dataclass
class Book:
    store: SqlStore
    id: str
    woods: str  # the French entry's id
    woods_hash: str
    harbour: str

    def gloss(self, language: str, name: str, gist: str) -> Gloss:
        return Gloss(self.woods, language, name, gist, self.woods_hash, "stored-by-test")

    def gloss_vectors(self, language: str) -> list[str]:
        view = gloss_model_id(HashingEmbedder().model_id, language)
        return list(self.store.load_book_vectors(self.id, view).entry_ids)


@pytest.fixture
def book(cli: CliRunner) -> Iterator[Book]:
    """The CLI user's book read by Korean and Portuguese readers: a French entry, an English
    one (made through the store the CLI opens: the same SQLite file)."""
    config = WorldbookSettings()
    config.data_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(config.resolved_database_url())
    assert isinstance(store, SqlStore)
    try:
        draft = BookDraft(title="Murmurs", settings={"reader_languages": ["ko", "pt"]})
        made = store.create_book(config.cli_user, draft)
        woods, harbour = store.add_entries(made.id, [WOODS, HARBOUR])
        yield Book(store, made.id, woods.id, woods.content_hash, harbour.id)
    finally:
        store.close()


def test_write_without_a_model_names_the_setting(cli: CliRunner, book: Book) -> None:
    result = run(cli, "glosses", "write", "--book", book.id, code=6)
    assert "llm_not_configured" in result.stderr
    assert "WORLDBOOK_LLM_URL" in result.stderr and "--embed-only" in result.stderr
    assert book.store.book_glosses(book.id) == []


def test_embed_only_embeds_stored_glosses_without_a_model(cli: CliRunner, book: Book) -> None:
    book.store.save_glosses(book.id, [book.gloss("ko", KO_NAME, KO_GIST)])
    assert book.gloss_vectors("ko") == []
    report = run(cli, "glosses", "write", "--book", book.id, "--embed-only", "--json")
    assert report == {
        "book_id": book.id,
        "asked": 0,
        "written": 0,
        "embedded": 1,
        "dropped": {},
        "failed": 0,
    }
    assert book.gloss_vectors("ko") == [book.woods]
    again = run(cli, "glosses", "write", "--book", book.id, "--embed-only")
    assert f"book {book.id}: 0 model calls, 0 glosses written, 0 embedded" in again.stdout


def test_list_and_delete_stored_glosses(cli: CliRunner, book: Book) -> None:
    book.store.save_glosses(
        book.id, [book.gloss("ko", KO_NAME, KO_GIST), book.gloss("pt", PT_NAME, PT_GIST)]
    )
    listed = run(cli, "glosses", "list", "--book", book.id, "--json")
    assert listed["book_id"] == book.id and listed["reader_languages"] == ["ko", "pt"]
    rows = sorted(listed["glosses"], key=lambda g: g["language"])
    assert rows == [
        {
            "entry_id": book.woods,
            "entry_title": WOODS.title,
            "language": language,
            "name": name,
            "gist": gist,
            "model": "stored-by-test",
            "generated": True,
        }
        for language, name, gist in (("ko", KO_NAME, KO_GIST), ("pt", PT_NAME, PT_GIST))
    ]
    text = run(cli, "glosses", "list", "--book", book.id).stdout
    assert f"book {book.id}: readers ko, pt" in text
    assert f"{book.woods} ({WOODS.title}) [ko] {KO_NAME}: {KO_GIST}" in text
    # Another user neither lists nor deletes a private book's glosses (as if it did not exist).
    run(cli, "glosses", "list", "--book", book.id, "--user", "mallory", code=3)
    run(cli, "glosses", "delete", "--book", book.id, "--user", "mallory", code=3)

    run(cli, "glosses", "write", "--book", book.id, "--embed-only")
    assert book.gloss_vectors("pt") == [book.woods]
    gone = run(cli, "glosses", "delete", "--book", book.id, "--language", "pt")
    assert gone.stdout.strip() == "deleted 1 glosses"
    assert book.gloss_vectors("pt") == [] and book.gloss_vectors("ko") == [book.woods]
    left = run(cli, "glosses", "list", "--book", book.id, "--json")["glosses"]
    assert [g["language"] for g in left] == ["ko"]
    assert run(cli, "glosses", "delete", "--book", book.id).stdout.strip() == "deleted 1 glosses"
    assert run(cli, "glosses", "list", "--book", book.id, "--json")["glosses"] == []
    assert book.gloss_vectors("ko") == []


def _reply(*glosses: tuple[str, str, str]) -> Reply:
    items = [{"language": lang, "name": name, "gist": gist} for lang, name, gist in glosses]
    return Reply(body=openai_answer(json.dumps({"glosses": items}, ensure_ascii=False)))


def test_write_asks_the_configured_model_and_reports_what_it_kept(
    cli: CliRunner, book: Book, monkeypatch: pytest.MonkeyPatch
) -> None:
    upstream = ScriptedUpstream().start()
    monkeypatch.setenv("WORLDBOOK_LLM_URL", upstream.base_url)
    monkeypatch.setenv("WORLDBOOK_LLM_MODEL", MODEL)
    monkeypatch.setenv("WORLDBOOK_LLM_MAX_RETRIES", "0")
    english = ("Harbour ledger", "A ledger of the harbour's cargo.")
    try:
        # One call for the French entry (both languages), capped by --max-calls.
        upstream.queue(_reply(("ko", KO_NAME, KO_GIST), ("pt", PT_NAME, PT_GIST)))
        first = run(cli, "glosses", "write", "--book", book.id, "--max-calls", "1", "--json")
        assert first == {
            "book_id": book.id,
            "asked": 1,
            "written": 2,
            "embedded": 2,
            "dropped": {},
            "failed": 0,
        }
        asked = upstream.seen[0].body["messages"][-1]["content"]
        assert f"Title: {WOODS.title}" in asked and "ko (Korean), pt (Portuguese)" in asked
        # The next run asks only for the English entry: its Korean gloss is in English (dropped),
        # its Portuguese one kept.
        upstream.queue(_reply(("ko", *english), ("pt", "Livro do porto", "Registo do porto.")))
        second = run(cli, "glosses", "write", "--book", book.id)
        assert f"book {book.id}: 1 model calls, 1 glosses written, 1 embedded, 0 calls failed" in (
            second.stdout
        )
        assert "dropped 1: wrong language" in second.stdout
        # A failing model call is counted, not fatal (no reply is queued: the upstream says 500).
        third = run(cli, "glosses", "write", "--book", book.id, "--json")
        assert (third["asked"], third["written"], third["failed"]) == (1, 0, 1)
    finally:
        upstream.stop()
    assert len(upstream.seen) == 3
    assert all(s.path == "/v1/chat/completions" and s.body["model"] == MODEL for s in upstream.seen)
    stored = {(g.entry_id, g.language): g for g in book.store.book_glosses(book.id)}
    assert set(stored) == {(book.woods, "ko"), (book.woods, "pt"), (book.harbour, "pt")}
    assert {g.model for g in stored.values()} == {MODEL}
    assert book.gloss_vectors("ko") == [book.woods]
    assert sorted(book.gloss_vectors("pt")) == sorted([book.woods, book.harbour])


def test_index_embeds_stored_glosses_and_a_rebuild_embeds_them_again(
    cli: CliRunner, book: Book
) -> None:
    # Glosses written under another embedder (or before a rebuild) have no vectors of this one:
    # indexing embeds them without asking any model (none is configured here).
    book.store.save_glosses(book.id, [book.gloss("ko", KO_NAME, KO_GIST)])
    first = run(cli, "index", "--json")
    assert (first["indexed"], first["gloss_vectors"]) == (2, 1)
    assert book.gloss_vectors("ko") == [book.woods]
    assert run(cli, "index", "--json")["gloss_vectors"] == 0  # nothing pending, nothing missing
    rebuilt = run(cli, "index", "--rebuild", "--json")
    assert (rebuilt["indexed"], rebuilt["gloss_vectors"]) == (2, 1)  # dropped, then embedded
    assert book.gloss_vectors("ko") == [book.woods]
    assert book.store.book_glosses(book.id)[0].name == KO_NAME  # the gloss itself is kept
