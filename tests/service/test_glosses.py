"""Glosses on the in-memory fakes (ADR 0023): the writer asks the model once per entry and
language, keeps only lines in the asked language, embeds them per language, and a turn in a
reader language finds lore written in another language through its gloss; without reader
languages (or a model) nothing changes."""

from __future__ import annotations

import re
from typing import Any

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.glosses import gloss_model_id
from worldbook.core.types import Message, ModelProfile, SemanticHit, rescored
from worldbook.llm_port import LLMCapabilities, LLMRequest, LLMResult
from worldbook.service.cast import BookSource
from worldbook.service.glosses import books_with_readers, write_book_glosses
from worldbook.service.indexing import index_now
from worldbook.service.services import Services
from worldbook.service.turns import select_turn
from worldbook.testing import fake_services

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")
FILLER = "Harbour records list cargo, tolls and tides each season. "
WOODS = EntryDraft(
    title="Le Bois Murmurant",
    lore="Dans ce bois les arbres parlent la nuit et les loups se taisent.",
)
KOREAN = {"Le Bois Murmurant": ("속삭이는 숲", "밤이면 나무들이 말하는 숲이다.")}
ASKED_IN_KOREAN = "밤이면 나무들이 말하는 숲이 있다던데, 거기에 가 봤어?"


class GlossingLLM:
    """Answers a gloss request from ``KOREAN`` by the entry's title; for any other entry it
    answers in English, as a small model often does (the writer must drop those)."""

    capabilities = LLMCapabilities()
    model = "glossing"

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMResult:
        self.requests.append(request)
        found = re.search(r"^Title: (.*)$", request.messages[-1].content, re.MULTILINE)
        assert found is not None
        name, gist = KOREAN.get(found.group(1), ("Harbour ledger", "A ledger of the harbour."))
        reply: dict[str, Any] = {"glosses": [{"language": "ko", "name": name, "gist": gist}]}
        return LLMResult(text=str(reply), data=reply, model=self.model)


MARKET = EntryDraft(title="밤 시장", lore="밤이면 상인들이 조용히 말하는 시장이다. " * 3)


READERS_KO = {"reader_languages": ["ko"]}


def _book(services: Services, readers: list[str] | None, *extra: EntryDraft) -> str:
    settings = {"reader_languages": readers} if readers is not None else {}
    book = services.books.create_book("alice", BookDraft(title="Lore", settings=settings))
    fillers = [
        EntryDraft(title=f"Ledger {i}", lore=FILLER * (i % 3 + 8) + "Tally. " * (i // 3))
        for i in range(60)
    ]
    services.store.add_entries(book.id, [*fillers, WOODS, *extra])  # type: ignore[attr-defined]
    index_now(services)
    return book.id


def _injected(services: Services, book_id: str, *texts: str) -> list[str]:
    messages = [Message("assistant" if i % 2 else "user", t) for i, t in enumerate(texts)]
    result = select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=messages,
        profile=PROFILE,
    )
    body: dict[str, Any] = result.to_json()
    return [e["title"] for e in body["injected"]]


def _write(services: Services, book_id: str, llm: GlossingLLM | None) -> dict[str, Any]:
    report = write_book_glosses(
        book_id,
        store=services.store,
        llm=llm,
        embedder=services.embedder,
        model="glossing",
        on_saved=services.invalidate_books,
    )
    return report.as_dict()


def test_the_writer_keeps_only_glosses_in_the_asked_language_and_is_idempotent() -> None:
    services = fake_services(index_on_enqueue=False)
    book_id = _book(services, ["ko"])
    llm = GlossingLLM()
    report = _write(services, book_id, llm)
    assert report["asked"] == 61  # every entry is written in another language than Korean
    assert report["written"] == 1 and report["embedded"] == 1
    assert report["dropped"] == {"wrong language": 60}
    (gloss,) = services.store.book_glosses(book_id)
    assert (gloss.language, gloss.name, gloss.model) == ("ko", "속삭이는 숲", "glossing")
    stored = services.store.load_book_vectors(book_id, gloss_model_id(services.model_id, "ko"))
    assert len(stored.entry_ids) == 1
    # A second run asks only for what is still missing and embeds nothing twice.
    again = _write(services, book_id, llm)
    assert again["written"] == 0 and again["embedded"] == 0
    assert again["asked"] == 60


def test_a_turn_in_a_reader_language_finds_lore_through_its_gloss() -> None:
    services = fake_services(index_on_enqueue=False)
    book_id = _book(services, ["ko"], MARKET)
    found = _injected(services, book_id, ASKED_IN_KOREAN)
    assert "밤 시장" in found and "Le Bois Murmurant" not in found
    _write(services, book_id, GlossingLLM())
    assert "Le Bois Murmurant" in _injected(services, book_id, ASKED_IN_KOREAN)
    # The gloss is never shown as lore: what is sent is the author's own text.
    result: dict[str, Any] = select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=[Message("user", ASKED_IN_KOREAN)],
        profile=PROFILE,
    ).to_json()
    assert "속삭이는" not in str(result["injected"])
    # The trace says a generated view found it (and only where one did).
    reasons = {row["title"]: row["reason"] for row in result["trace"]}
    assert reasons["Le Bois Murmurant"].endswith("(through its generated ko gloss)")
    assert "gloss" not in reasons["밤 시장"]


def test_an_edited_entry_loses_its_gloss_until_it_is_written_again() -> None:
    services = fake_services(index_on_enqueue=False)
    book_id = _book(services, ["ko"], MARKET)
    _write(services, book_id, GlossingLLM())
    assert "Le Bois Murmurant" in _injected(services, book_id, ASKED_IN_KOREAN)
    woods = next(e for e in services.store.list_entries(book_id) if e.title == WOODS.title)
    services.store.update_entry(woods.id, lore=WOODS.lore + " Les chasseurs l'évitent.")
    index_now(services)
    assert services.store.book_glosses(book_id) == []
    assert "Le Bois Murmurant" not in _injected(services, book_id, ASKED_IN_KOREAN)


def test_only_existing_books_with_reader_languages_need_a_gloss_run() -> None:
    services = fake_services()
    read = services.books.create_book("alice", BookDraft(title="R", settings=READERS_KO)).id
    plain = services.books.create_book("alice", BookDraft(title="P")).id
    also = services.books.create_book("alice", BookDraft(title="A", settings=READERS_KO)).id
    asked = [also, plain, "no-such-book", read, also]
    assert books_with_readers(asked, store=services.store) == [also, read]


def test_without_reader_languages_or_a_model_nothing_is_written_or_searched() -> None:
    services = fake_services(index_on_enqueue=False)
    book_id = _book(services, None)
    llm = GlossingLLM()
    assert _write(services, book_id, llm)["asked"] == 0 and not llm.requests
    readers = fake_services(index_on_enqueue=False)
    with_readers = _book(readers, ["ko"])
    assert _write(readers, with_readers, None)["asked"] == 0
    assert readers.store.book_glosses(with_readers) == []


def test_a_model_may_name_the_language_by_code_english_name_or_own_name() -> None:
    from worldbook.service.glosses import language_code

    assert [language_code(x) for x in ("ko", " Korean ", "한국어", "PT", "Português")] == [
        "ko",
        "ko",
        "ko",
        "pt",
        "pt",
    ]
    assert language_code("Klingon") == "klingon"  # not asked for: the writer drops it


def test_a_hit_found_by_its_gloss_keeps_saying_so_after_the_views_are_fused() -> None:
    found = [SemanticHit("b", "woods", 0.5, gloss="ko"), SemanticHit("b", "market", 0.4)]
    fused = [(("b", "market"), 0.9), (("b", "woods"), 0.8), (("b", "only-aligned"), 0.1)]
    kept = rescored(fused, found)
    assert [(h.entry_id, h.score, h.gloss) for h in kept] == [
        ("market", 0.9, ""),
        ("woods", 0.8, "ko"),
        ("only-aligned", 0.1, ""),
    ]
    plain = [SemanticHit("b", e, s) for (_, e), s in fused]
    assert rescored(fused, found[1:]) == plain  # no gloss among the found: none is named
    # What else a hit carries is kept too (the links' lift), from its first hit in ``found``.
    lifted = [SemanticHit("b", "woods", 0.5, lift=0.2), SemanticHit("b", "woods", 0.1)]
    assert rescored([(("b", "woods"), 0.7)], lifted) == [SemanticHit("b", "woods", 0.7, lift=0.2)]
