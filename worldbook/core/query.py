"""How the last messages of a conversation combine into one search score per indexed row.

The vector index scores every row against every recent message separately (a ``(messages, rows)``
matrix, oldest message first, over every candidate row of the search) and this module turns that
matrix into one score per row. The methods below were compared on XQuAD conversations
(``benchmarks/bench_xquad.py``, recorded in ``docs/decisions.md``);
:data:`DEFAULT_COMBINATION` is the measured choice.

Weights are by recency only: the index receives message vectors, not roles, and the comparison
showed no reason to add more.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from worldbook.errors import InvalidInput

Scores = npt.NDArray[np.float32]


class Method(StrEnum):
    """A way to combine per-message scores into one score per row."""

    NEWEST = "newest"
    """The newest message alone."""
    MAX = "max"
    """Best score over messages, all equal."""
    MEAN = "mean"
    """Plain mean over messages (the same as searching with the mean vector)."""
    RECENCY_MEAN = "recency_mean"
    """Mean weighted by ``decay ** age`` (age 0 = newest)."""
    RECENCY_MAX = "recency_max"
    """Best of ``decay ** age * score`` over messages."""
    CENTRED_RECENCY_MAX = "centred_recency_max"
    """Best of ``decay ** age * (score - mean)`` over messages, where ``mean`` is that message's
    mean score over the candidate rows."""


_RECENCY = (Method.RECENCY_MEAN, Method.RECENCY_MAX, Method.CENTRED_RECENCY_MAX)


@dataclass(frozen=True, slots=True)
class QueryCombination:
    """A combination method and its recency decay (used by the recency methods only)."""

    method: Method = Method.CENTRED_RECENCY_MAX
    decay: float = 0.8

    def __post_init__(self) -> None:
        if not 0.0 < self.decay <= 1.0:
            raise InvalidInput(
                f"decay must be in (0, 1]; got {self.decay}.", field="query_combination.decay"
            )

    @property
    def label(self) -> str:
        if self.method in _RECENCY:
            return f"{self.method.value}(decay={self.decay:g})"
        return self.method.value


DEFAULT_COMBINATION = QueryCombination(Method.CENTRED_RECENCY_MAX, decay=0.8)
"""The measured choice (``docs/decisions.md``; the engine takes the decay from the setting
``query_recency_decay``). Centring makes the weighting independent of a model's score range:
e5's cosines sit in 0.7-0.9, where a raw ``0.5 * score`` never competes. The decay was 0.45
(chosen on XQuAD conversations, where every message is a self-contained question); real
roleplay turns describe the topic early and ask a bare follow-up last ("And who keeps it?"),
and 0.8 keeps those topics: hard set (ADR 0003) gold in full 56% -> 71% with the language
correction; the XQuAD drift scenario pays for it (docs/decisions.md)."""


def recency_weights(count: int, decay: float) -> Scores:
    """Weights for ``count`` messages, oldest first: ``decay ** age``, the newest weighing 1."""
    ages = np.arange(count - 1, -1, -1, dtype=np.float64)
    return np.power(decay, ages).astype(np.float32)


def centred(matrix: Scores) -> Scores:
    """Each message's scores minus its mean over the rows (the mean summed in float64, so it
    does not depend on the order of the rows beyond float32 rounding)."""
    means = matrix.astype(np.float64).mean(axis=1, keepdims=True).astype(np.float32)
    return np.array(matrix - means, dtype=np.float32)


def require_messages(matrix: Scores, *, field: str, shape: str, first: str) -> None:
    """Refuse anything but a 2-D matrix with at least one message row (the search's input)."""
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise InvalidInput(
            f"{field} must be a {shape} matrix with at least one {first}; got shape "
            f"{matrix.shape}.",
            field=field,
        )


def combine_scores(scores: npt.ArrayLike, combination: QueryCombination) -> Scores:
    """One score per row from a ``(messages, rows)`` score matrix, messages oldest first.

    The rows must be every candidate of the search (all the books searched together): the
    centred method measures each score against the message's mean over them.
    """
    matrix = np.asarray(scores, dtype=np.float32)
    require_messages(matrix, field="scores", shape="(messages, rows)", first="message")
    method = combination.method
    if method is Method.NEWEST:
        combined = matrix[-1]
    elif method is Method.MAX:
        combined = matrix.max(axis=0)
    elif method is Method.MEAN:
        combined = matrix.mean(axis=0)
    else:
        weights = recency_weights(matrix.shape[0], combination.decay)[:, None]
        if method is Method.RECENCY_MEAN:
            combined = (weights * matrix).sum(axis=0) / weights.sum()
        elif method is Method.RECENCY_MAX:
            combined = (weights * matrix).max(axis=0)
        else:
            combined = (weights * centred(matrix)).max(axis=0)
    return np.array(combined, dtype=np.float32)
