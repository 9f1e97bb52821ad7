"""Calibrated score fusion of two meaning views of the same entries (ADR 0016).

The primary view (e5-small with the language correction) ranks well within a language; the
aligned view (Universal Sentence Encoder multilingual, trained on translation ranking) places a
described referent near lore written in another language. Their cosine scores live on different
scales, so the aligned scores are first moved onto the primary's: standardised over the
aligned candidates, then given the primary candidates' mean and spread. An entry's fused score
is the weighted mean ``(primary + w * aligned) / (1 + w)``, which keeps the primary's scale —
the selection compares meaning scores with the turn's best (DESIGN §2 rule 5), so the scale
matters. An entry one view did not return gets that view's lowest score (it ranked below every
candidate it did return); an entry the aligned view cannot read (its language, or the query's,
is outside the aligned model's) keeps its primary score alone.

Pure: plain mappings in, a plain mapping out. With weight 0 the result is the primary's scores
exactly.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

MIN_SPREAD = 1e-6
"""Below this standard deviation a view's scores carry no ranking, only a level."""


def _moments(scores: Mapping[K, float]) -> tuple[float, float]:
    values = list(scores.values())
    mean = math.fsum(values) / len(values)
    spread = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    return mean, spread


def calibrate(aligned: Mapping[K, float], primary: Mapping[K, float]) -> dict[K, float]:
    """The aligned scores on the primary's scale (same mean and spread over each view's own
    candidates); unchanged when either view is empty or the aligned one is flat."""
    if not aligned or not primary:
        return dict(aligned)
    mean_a, spread_a = _moments(aligned)
    mean_p, spread_p = _moments(primary)
    if spread_a < MIN_SPREAD:
        return dict.fromkeys(aligned, mean_p)
    return {key: mean_p + (s - mean_a) / spread_a * spread_p for key, s in aligned.items()}


def fuse(
    primary: Mapping[K, float],
    aligned: Mapping[K, float],
    weight: float,
    blind: Collection[K] = (),
    weights: Mapping[K, float] | None = None,
) -> dict[K, float]:
    """Fused scores of the union of both views' candidates (the primary's alone for weight
    0). ``blind``: entries whose aligned score means nothing (they keep the primary's);
    ``weights``: an entry's own aligned weight where it differs from ``weight``."""
    if weight < 0:
        raise ValueError(f"weight must be 0 or more; got {weight}")
    if weight == 0 or not aligned:
        return dict(primary)
    moved = calibrate(aligned, primary)
    floor_p = min(primary.values()) if primary else min(moved.values())
    floor_a = min(moved.values())
    fused: dict[K, float] = {}
    for key in (*primary, *(k for k in moved if k not in primary)):
        p = primary.get(key, floor_p)
        if key in blind:
            if key in primary:
                fused[key] = p
            continue  # an aligned-only candidate the aligned view cannot read: not found
        a = moved.get(key, floor_a)
        w = weight if weights is None else weights.get(key, weight)
        fused[key] = (p + w * a) / (1 + w)
    return fused


def ranked(scores: Mapping[K, float], k: int) -> list[tuple[K, float]]:
    """The ``k`` best of ``scores``, best first; ties keep the mapping's order."""
    order = sorted(enumerate(scores.items()), key=lambda item: (-item[1][1], item[0]))
    return [pair for _, pair in order[:k]]
