"""Diversifying the top of the meaning ranking (ADR 0021): a message that asks about two things
must not see the second crowded out by near-duplicates of the first.

Maximal marginal relevance (Carbonell & Goldstein, 1998), kept on the scores' own scale: the
hits are taken greedily, each time the one whose score minus a penalty is highest, the penalty
being ``strength * spread * max(0, its highest similarity to an entry already taken)``
(``spread``: the standard deviation of the hits' scores, so the strength means the same for
any embedder). The entries the conversation names (``kept``) are never penalised: the
literal tier (DESIGN §2 rule 5, "named explicitly") orders its hits by their meaning scores,
and must not depend on this step. Each hit comes back with the score it was taken at; the
scores only go down, and in taken order they never rise (a penalty only grows as more hits are
taken), so a ranking by score is the diversified order and the full-score share of ADR 0013
sees the near-duplicates as the weaker matches they are for this turn.

Pure: plain pairs and a similarity function in, plain pairs out. With a strength of 0, or
fewer than two hits, the hits come back unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

Similarity = Callable[[K, K], float]
"""``similarity(a, b)``: how alike two entries are (a centred cosine; unknown pairs 0)."""


def spread(scores: Sequence[float]) -> float:
    """The standard deviation of the scores (0 for fewer than two)."""
    if len(scores) < 2:
        return 0.0
    mean = math.fsum(scores) / len(scores)
    return math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))


def diversify(
    hits: Sequence[tuple[K, float]],
    similarity: Similarity[K],
    strength: float,
    kept: Collection[K] = (),
) -> list[tuple[K, float]]:
    """The hits (best first) re-scored by maximal marginal relevance, best first.

    ``kept``: entries whose scores never change (they still count as taken when their turn
    comes, so their near-duplicates give way)."""
    if strength < 0:
        raise ValueError(f"strength must be 0 or more; got {strength}")
    unit = strength * spread([s for _, s in hits])
    if unit == 0 or len(hits) < 2:
        return list(hits)
    waiting = dict(hits)
    # ``closest[key]``: the highest similarity of a waiting hit to a hit taken so far.
    closest = dict.fromkeys(waiting, 0.0)
    order = {key: i for i, (key, _) in enumerate(hits)}

    def adjusted(key: K) -> float:
        return waiting[key] if key in kept else waiting[key] - unit * max(0.0, closest[key])

    out: list[tuple[K, float]] = []
    while waiting:
        key = max(waiting, key=lambda k: (adjusted(k), -order[k]))
        out.append((key, adjusted(key)))
        del waiting[key], closest[key]
        for other in waiting:
            closest[other] = max(closest[other], similarity(other, key))
    return out
