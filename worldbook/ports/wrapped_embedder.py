"""The base of every embedder that wraps another and changes only part of what it does (pure:
no I/O of its own, so the benchmarks can use it without loading the adapters)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar, cast, overload

from worldbook.ports import Embedder, Vectors

T = TypeVar("T")


class _Inner(Generic[T]):
    """A read-only attribute that is always the inner embedder's attribute of the same name
    (one mechanism instead of a property per attribute of the Embedder port)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, wrapper: None, owner: type) -> _Inner[T]: ...

    @overload
    def __get__(self, wrapper: EmbedderWrapper, owner: type) -> T: ...

    def __get__(self, wrapper: EmbedderWrapper | None, owner: type) -> _Inner[T] | T:
        if wrapper is None:
            return self
        return cast(T, getattr(wrapper._inner, self._name))

    def __set__(self, wrapper: EmbedderWrapper, value: T) -> None:
        raise AttributeError(f"{self._name} is the inner embedder's; it cannot be set")


class EmbedderWrapper:
    """An :class:`~worldbook.ports.Embedder` that passes everything through to ``inner``.

    Subclasses (batching, the benchmarks' cache and corrections) override the embed methods they
    change; the model's identity and size always stay the inner embedder's.
    """

    model_id: _Inner[str] = _Inner()
    dim: _Inner[int] = _Inner()
    max_passage_chars: _Inner[int] = _Inner()
    loaded: _Inner[bool] = _Inner()

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed_passages(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed_queries(texts)
