"""The aligned view and the referent links on the in-memory fakes (ADR 0016): indexing fills
both views, weight 0 or no view answers exactly as before, a view aligned across languages
finds lore the primary cannot, and a follow-up lifts the entry whose lore names its referent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workers.runtime import Indexer
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import Message, ModelProfile
from worldbook.ports import Vectors
from worldbook.service.aligned_view import AlignedView
from worldbook.service.cast import BookSource
from worldbook.service.indexing import index_now
from worldbook.service.services import Services
from worldbook.service.turns import select_turn
from worldbook.testing import BruteForceIndex, HashingEmbedder, InMemoryStore, fake_services

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")
FILLER = "Harbour records list cargo, tolls and tides each season. "
GLOSSARY = {"bois": "forest", "arbres": "trees", "parlent": "speak", "nuit": "night"}


class GlossaryEmbedder(HashingEmbedder):
    """A fake aligned model: French words are read as their English translations first, so
    texts that mean the same in either language land together (what translation ranking
    training gives USE)."""

    def _translate(self, texts: Sequence[str]) -> list[str]:
        return [" ".join(GLOSSARY.get(w.casefold(), w) for w in t.split()) for t in texts]

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return super().embed_passages(self._translate(texts))

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return super().embed_queries(self._translate(texts))


def _services(aligned: bool, weight: float = 1.0, **settings: Any) -> Services:
    services = fake_services(index_on_enqueue=False, **settings)
    if aligned:
        store = services.store
        model = GlossaryEmbedder(model_id="fake-aligned")
        index = BruteForceIndex(lambda b: store.load_book_vectors(b, model.model_id))
        services.aligned = AlignedView(model, index, weight=weight)
    return services


def _book(services: Services, drafts: list[EntryDraft]) -> str:
    book = services.books.create_book("alice", BookDraft(title="Lore"))
    # A large book (DESIGN §2 rule 5: ranked, not sent whole). No two fillers score alike:
    # a tie falls to the entry ids, which differ from one run to the next.
    fillers = [
        EntryDraft(title=f"Ledger {i}", lore=FILLER * (i % 3 + 8) + "Tally. " * (i // 3))
        for i in range(60)
    ]
    services.store.add_entries(book.id, [*fillers, *drafts])  # type: ignore[attr-defined]
    index_now(services)
    return book.id


def _turn(services: Services, book_id: str, *texts: str) -> dict[str, Any]:
    messages = [Message("assistant" if i % 2 else "user", t) for i, t in enumerate(texts)]
    result = select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=messages,
        profile=PROFILE,
    )
    return result.to_json()


def _injected(body: dict[str, Any]) -> list[str]:
    return [e["title"] for e in body["injected"]]


WOODS = EntryDraft(title="Le Bois Murmurant", lore="Dans ce bois les arbres parlent la nuit . " * 3)
MARKET = EntryDraft(title="Night Market", lore="A night market where traders speak softly. " * 3)


def test_indexing_stores_both_models_vectors() -> None:
    services = _services(aligned=True)
    book_id = _book(services, [WOODS])
    store = services.store
    assert services.aligned is not None
    primary = store.load_book_vectors(book_id, services.model_id)
    second = store.load_book_vectors(book_id, services.aligned.model_id)
    assert sorted(set(primary.entry_ids)) == sorted(set(second.entry_ids))
    assert len(set(second.entry_ids)) == 61  # 60 ledgers and the woods


def test_the_celery_indexer_runs_the_aligned_pass_too() -> None:
    store = InMemoryStore()
    book = store.create_book("alice", BookDraft(title="Lore"))
    store.add_entries(book.id, [WOODS])
    aligned = GlossaryEmbedder(model_id="fake-aligned")
    report = Indexer(store=store, embedder=HashingEmbedder(), aligned=aligned).run(None)
    assert report.aligned is not None and len(report.aligned.indexed) == 1
    assert store.load_book_vectors(book.id, "fake-aligned").entry_ids


def test_without_the_view_or_with_weight_zero_turns_are_unchanged() -> None:
    texts = ("Tell me of the harbour.", "Tolls rose.", "Take me to the speaking forest.")
    bodies = []
    for services in (_services(aligned=False), _services(aligned=True, weight=0.0)):
        bodies.append(_turn(services, _book(services, [WOODS]), *texts))
    assert _shape(bodies[0]) == _shape(bodies[1])
    assert bodies[0]["per_turn_tokens"] == bodies[1]["per_turn_tokens"]


def _shape(body: dict[str, Any]) -> list[tuple[str, str, int]]:
    """What was sent, in order, without the ids (each run makes its own)."""
    index = [(x["title"], "index", x["tokens"]) for x in body["index"]]
    return [(e["title"], e["via"], e["tokens"]) for e in body["injected"]] + index


def test_the_aligned_view_finds_lore_written_in_another_language() -> None:
    texts = ("Is there a forest where the trees speak at night?",)
    alone = _services(aligned=False)
    fused = _services(aligned=True)
    found = _injected(_turn(alone, _book(alone, [WOODS, MARKET]), *texts))
    assert "Night Market" in found and "Le Bois Murmurant" not in found
    assert "Le Bois Murmurant" in _injected(_turn(fused, _book(fused, [WOODS, MARKET]), *texts))


QUEEN = EntryDraft(title="Queen Maren", lore="Queen Maren rules the harbour city. " * 3)
SISTER = EntryDraft(
    title="Ilse Vane", lore="Ilse Vane is the younger sister of Queen Maren, exiled. " * 3
)
FOLLOW_UP = ("Who rules here? Queen Maren?", "She does, from the tide hall.", "Her sister, then?")


def _semantic_rank(body: dict[str, Any], title: str) -> int:
    titles = [r["title"] for r in body["trace"] if "semantic" in r["reason"]]
    return titles.index(title) if title in titles else len(titles)


def test_a_follow_up_lifts_the_entry_whose_lore_names_the_referent() -> None:
    off = _services(aligned=False, referent_link_weight=0.0)
    on = _services(aligned=False)
    before = _turn(off, _book(off, [QUEEN, SISTER]), *FOLLOW_UP)
    after = _turn(on, _book(on, [QUEEN, SISTER]), *FOLLOW_UP)
    assert "Ilse Vane" not in _injected(before)
    assert "Ilse Vane" in _injected(after)
    assert _semantic_rank(after, "Ilse Vane") <= _semantic_rank(before, "Ilse Vane")


def test_ready_reports_the_aligned_model() -> None:
    from worldbook.api.routes.system import readiness

    assert "aligned_embedder" not in readiness(_services(aligned=False))[1]
    ok, report = readiness(_services(aligned=True))
    assert ok
    assert report["aligned_embedder"] == {"up": True, "model_id": "fake-aligned", "loaded": True}


def test_a_cross_language_weight_trusts_the_aligned_view_for_lore_in_another_language() -> None:
    texts = ("Is there a forest where the trees speak at night?",)

    def score(cross_weight: float | None) -> float:
        services = _services(aligned=True)
        assert services.aligned is not None
        services.aligned.cross_weight = cross_weight
        body = _turn(services, _book(services, [WOODS, MARKET]), *texts)
        [row] = [r for r in body["trace"] if r["title"] == "Le Bois Murmurant"]
        return float(row["reason"].removeprefix("semantic: score "))

    # The French entry's e5 score is low, its aligned score high: more aligned weight where
    # the languages differ lifts it; the English entries keep the view's weight.
    assert score(4.0) > score(None)
