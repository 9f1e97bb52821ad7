"""The aligned view with the real models (ADR 0016): a referent described in one language and
written in another ranks higher when USE multilingual is fused with e5 than under e5 alone."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from worldbook.adapters.embedders import load_embedder
from worldbook.bench.quality import _components, _import_all
from worldbook.core.types import SemanticHit
from worldbook.service.aligned_view import fused_search
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings

pytestmark = [pytest.mark.model, pytest.mark.slow]

MERIDIAN = Path(__file__).resolve().parents[2] / "benchmarks" / "hard_set" / "meridian"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Components, str]]:
    settings = WorldbookSettings(embedder="e5-small", embed_threads=1)
    parts = _components(
        settings,
        load_embedder("e5-small", threads=1),
        tmp_path_factory.mktemp("aligned"),
        load_embedder("use-m3", threads=1),
    )
    book_id = _import_all(parts.services, [MERIDIAN / "world.json"])["world.json"]
    yield parts, book_id
    parts.close()


def _rank(hits: Sequence[SemanticHit], entry_id: str) -> int:
    return next((i for i, h in enumerate(hits) if h.entry_id == entry_id), len(hits))


@pytest.mark.parametrize("turn_id", ["mr-cross-it-1", "mr-cross-es-1"])
def test_a_cross_lingual_referent_ranks_higher_fused(
    world: tuple[Components, str], turn_id: str
) -> None:
    parts, book_id = world
    services = parts.services
    assert services.aligned is not None
    turns = json.loads((MERIDIAN / "turns.json").read_text(encoding="utf-8"))["turns"]
    turn = next(t for t in turns if t["id"] == turn_id)
    texts = [m["content"] for m in turn["messages"]]
    entries = {e.title: e.id for e in services.store.list_entries(book_id)}
    gold = entries[turn["gold"][0]]

    def primary(queries: Sequence[str], book_ids: Sequence[str], k: int) -> list[SemanticHit]:
        vectors = services.query_embeddings.embed(list(queries))
        return services.vector_index.search(list(book_ids), vectors, k)

    alone = fused_search(primary, None, texts, [book_id], 20)
    fused = fused_search(primary, services.aligned, texts, [book_id], 20)
    assert _rank(fused, gold) < _rank(alone, gold)
    assert _rank(fused, gold) < 8  # within the turn's full and index slots
