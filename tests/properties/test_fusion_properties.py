"""Properties of the fused meaning search (ADR 0016)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from worldbook.core.fusion import fuse, ranked

scores = st.dictionaries(
    st.text(min_size=1, max_size=3), st.floats(-1, 1, allow_nan=False), max_size=12
)


@given(scores, scores, st.integers(1, 15))
def test_weight_zero_ranks_as_the_primary_view(
    primary: dict[str, float], aligned: dict[str, float], k: int
) -> None:
    assert ranked(fuse(primary, aligned, 0.0), k) == ranked(primary, k)


@given(scores, scores, st.floats(0.01, 10))
def test_fused_scores_stay_within_the_views_range(
    primary: dict[str, float], aligned: dict[str, float], weight: float
) -> None:
    fused = fuse(primary, aligned, weight)
    assert set(fused) == set(primary) | set(aligned)
    if primary:
        low, high = min(primary.values()), max(primary.values())
        spread = high - low
        for value in fused.values():
            # Calibrated aligned scores share the primary's mean and spread, so a weighted
            # mean stays within a few spreads of the primary's range.
            assert low - 4 * spread - 1e-9 <= value <= high + 4 * spread + 1e-9


distinct = scores.filter(
    lambda d: all(abs(a - b) > 1e-6 for i, a in enumerate(d.values()) for b in list(d.values())[:i])
)


@given(distinct, st.floats(0.01, 10))
def test_agreeing_views_keep_the_primary_order(primary: dict[str, float], weight: float) -> None:
    # The aligned view an affine image of the primary: the fused order is the primary's
    # (distinct scores: float rounding may break exact ties either way).
    aligned = {key: 0.5 * value + 0.1 for key, value in primary.items()}
    fused = fuse(primary, aligned, weight)
    assert [k for k, _ in ranked(fused, 12)] == [k for k, _ in ranked(primary, 12)]
