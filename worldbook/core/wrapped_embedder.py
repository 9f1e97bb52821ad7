"""The base of every embedder that wraps another and changes only part of what it does (pure:
no I/O of its own, so the benchmarks can use it without loading the adapters)."""

from __future__ import annotations

from collections.abc import Sequence

from worldbook.ports import Embedder, Vectors


class EmbedderWrapper:
    """An :class:`~worldbook.ports.Embedder` that passes everything through to ``inner``.

    Subclasses (batching, the benchmarks' cache and corrections) override the embed methods they
    change; the model's identity and size always stay the inner embedder's.
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    @property
    def max_passage_chars(self) -> int:
        return self._inner.max_passage_chars

    @property
    def loaded(self) -> bool:
        return self._inner.loaded

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed_passages(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed_queries(texts)
