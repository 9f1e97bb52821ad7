"""How the last messages' scores combine (worldbook.core.query)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from worldbook.core.query import (
    DEFAULT_COMBINATION,
    Method,
    QueryCombination,
    combine_scores,
    recency_weights,
)
from worldbook.errors import InvalidInput

SCORES = np.array(
    [
        [0.9, 0.1, 0.2],  # oldest
        [0.1, 0.2, 0.3],
        [0.2, 0.6, 0.1],  # newest
    ],
    dtype=np.float32,
)


def test_recency_weights_halve_per_message_back() -> None:
    assert recency_weights(3, 0.5).tolist() == [0.25, 0.5, 1.0]
    assert recency_weights(1, 0.3).tolist() == [1.0]


@pytest.mark.parametrize(
    ("combination", "expected"),
    [
        (QueryCombination(Method.NEWEST), [0.2, 0.6, 0.1]),
        (QueryCombination(Method.MAX), [0.9, 0.6, 0.3]),
        (QueryCombination(Method.MEAN), [0.4, 0.3, 0.2]),
        (
            QueryCombination(Method.RECENCY_MEAN, 0.5),
            [
                (0.25 * 0.9 + 0.5 * 0.1 + 0.2) / 1.75,
                (0.25 * 0.1 + 0.5 * 0.2 + 0.6) / 1.75,
                (0.25 * 0.2 + 0.5 * 0.3 + 0.1) / 1.75,
            ],
        ),
        (QueryCombination(Method.RECENCY_MAX, 0.5), [0.225, 0.6, 0.15]),
        # message means 0.4, 0.2, 0.3; centred rows weighted 0.25, 0.5, 1
        (QueryCombination(Method.CENTRED_RECENCY_MAX, 0.5), [0.125, 0.3, 0.05]),
    ],
)
def test_combinations_by_hand(combination: QueryCombination, expected: list[float]) -> None:
    combined = combine_scores(SCORES, combination)
    assert combined.dtype == np.float32
    assert combined.tolist() == pytest.approx(expected, abs=1e-6)


def test_an_old_match_as_clear_as_the_newest_does_not_beat_it_under_the_default() -> None:
    # The oldest message matched row 0 exactly as clearly as the newest matches row 1.
    scores = np.array([[0.9, 0.1, 0.2], [0.1, 0.2, 0.3], [0.1, 0.9, 0.2]], dtype=np.float32)
    assert int(np.argmax(combine_scores(scores, DEFAULT_COMBINATION))) == 1


def test_the_default_keeps_a_described_topic_through_a_reply_and_a_bare_question() -> None:
    # Follow-ups (ADR 0003): the topic is described two messages back ("the lighthouse on the
    # black cliff"), the newest message only asks "And who keeps it?" (a faint peak on row 3).
    scores = np.array(
        [
            [0.72, 0.86, 0.73, 0.71],  # the description: row 1 stands out
            [0.78, 0.79, 0.78, 0.78],  # a reply about something else
            [0.80, 0.80, 0.80, 0.83],  # the bare follow-up
        ],
        dtype=np.float32,
    )
    assert int(np.argmax(combine_scores(scores, DEFAULT_COMBINATION))) == 1
    # The former default (0.45) lost the topic here.
    old = QueryCombination(Method.CENTRED_RECENCY_MAX, 0.45)
    assert int(np.argmax(combine_scores(scores, old))) == 3


_MATRIX = arrays(
    np.float32,
    st.tuples(st.integers(1, 6), st.integers(1, 8)),
    elements=st.floats(-1, 1, width=32),
)


@settings(max_examples=100, deadline=None)
@given(row=arrays(np.float32, st.integers(1, 8), elements=st.floats(-1, 1, width=32)))
def test_one_message_scores_itself_under_every_method(row: np.ndarray) -> None:
    for method in Method:
        combined = combine_scores(row[None, :], QueryCombination(method, 0.5))
        expected = row - row.mean() if method is Method.CENTRED_RECENCY_MAX else row
        assert combined == pytest.approx(expected, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(matrix=_MATRIX, decay=st.floats(0.05, 1.0))
def test_combined_scores_stay_within_the_messages_scores(matrix: np.ndarray, decay: float) -> None:
    for method in (Method.MAX, Method.MEAN, Method.RECENCY_MEAN, Method.NEWEST):
        combined = combine_scores(matrix, QueryCombination(method, decay))
        assert np.all(combined <= matrix.max(axis=0) + 1e-5)
        assert np.all(combined >= matrix.min(axis=0) - 1e-5)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), messages=st.integers(1, 6), decay=st.floats(0.1, 1.0))
def test_recency_mean_is_search_with_the_weighted_mean_vector(
    seed: int, messages: int, decay: float
) -> None:
    rng = np.random.default_rng(seed)
    queries = rng.standard_normal((messages, 16)).astype(np.float32)
    rows = rng.standard_normal((10, 16)).astype(np.float32)
    weights = recency_weights(messages, decay)
    via_vector = rows @ (weights @ queries) / weights.sum()
    combined = combine_scores(queries @ rows.T, QueryCombination(Method.RECENCY_MEAN, decay))
    assert combined == pytest.approx(via_vector, abs=1e-4)


# Two conversations on 4 rows with e5-like bunched cosines (all within 0.70-0.90).
_TOPIC_THEN_FOLLOW_UP = np.array(
    [
        [0.74, 0.73, 0.72, 0.73],  # an unrelated earlier message, no clear match
        [0.72, 0.86, 0.73, 0.71],  # the question: row 1 stands out
        [0.80, 0.81, 0.82, 0.80],  # "tell me more about that": high but flat
    ],
    dtype=np.float32,
)
_DRIFT = np.array(
    [
        [0.71, 0.88, 0.72, 0.72],  # an old question: row 1
        [0.73, 0.72, 0.74, 0.73],
        [0.72, 0.73, 0.85, 0.71],  # the new question: row 2
    ],
    dtype=np.float32,
)
CENTRED = QueryCombination(Method.CENTRED_RECENCY_MAX, 0.5)


def test_centred_combination_keeps_the_topic_through_a_bare_follow_up() -> None:
    # Raw weighting cannot let an older message win when every cosine is in 0.7-0.9: a halved
    # score never reaches the newest message's. Centred, the question's clear peak wins.
    raw = combine_scores(_TOPIC_THEN_FOLLOW_UP, QueryCombination(Method.RECENCY_MAX, 0.5))
    assert int(np.argmax(raw)) == 2
    for combination in (CENTRED, DEFAULT_COMBINATION):
        assert int(np.argmax(combine_scores(_TOPIC_THEN_FOLLOW_UP, combination))) == 1


def test_centred_combination_follows_a_new_question_after_drift() -> None:
    for combination in (CENTRED, DEFAULT_COMBINATION):
        assert int(np.argmax(combine_scores(_DRIFT, combination))) == 2


def test_the_default_is_the_measured_centred_combination() -> None:
    assert QueryCombination() == DEFAULT_COMBINATION
    assert DEFAULT_COMBINATION.label == "centred_recency_max(decay=0.8)"


@settings(max_examples=100, deadline=None)
@given(
    matrix=arrays(
        np.float32,
        st.tuples(st.integers(1, 6), st.integers(1, 8)),
        elements=st.floats(-1, 1, width=32),
    ),
    scale=st.floats(0.1, 10.0),
    shift=st.floats(-1.0, 1.0),
    decay=st.floats(0.05, 1.0),
)
def test_centred_combination_ignores_the_models_score_scale(
    matrix: np.ndarray, scale: float, shift: float, decay: float
) -> None:
    # The point of centring: a model whose scores are an affine squeeze of another's
    # (e5's 0.7-0.9 against a wider spread) ranks the same.
    combination = QueryCombination(Method.CENTRED_RECENCY_MAX, decay)
    base = combine_scores(matrix, combination)
    moved = combine_scores(matrix * np.float32(scale) + np.float32(shift), combination)
    assert moved == pytest.approx(base * scale, abs=1e-4)


@settings(max_examples=100, deadline=None)
@given(matrix=_MATRIX, seed=st.integers(0, 1000))
def test_centred_combination_does_not_depend_on_row_order(matrix: np.ndarray, seed: int) -> None:
    order = np.random.default_rng(seed).permutation(matrix.shape[1])
    base = combine_scores(matrix, CENTRED)
    assert combine_scores(matrix[:, order], CENTRED) == pytest.approx(base[order], abs=1e-5)


def test_bad_inputs_are_rejected() -> None:
    with pytest.raises(InvalidInput):
        QueryCombination(Method.RECENCY_MEAN, 0.0)
    with pytest.raises(InvalidInput):
        QueryCombination(Method.RECENCY_MAX, 1.5)
    with pytest.raises(InvalidInput):
        combine_scores(np.zeros((0, 3)), DEFAULT_COMBINATION)
    with pytest.raises(InvalidInput):
        combine_scores(np.zeros(3), DEFAULT_COMBINATION)


def test_labels_name_the_decay_only_where_it_matters() -> None:
    assert QueryCombination(Method.MAX).label == "max"
    assert QueryCombination(Method.RECENCY_MAX, 0.5).label == "recency_max(decay=0.5)"
    assert CENTRED.label == "centred_recency_max(decay=0.5)"


@pytest.mark.parametrize("shape", [(0, 3), (3,), (2, 2, 2)])
def test_scores_that_are_not_a_matrix_of_messages_are_refused_naming_the_field(
    shape: tuple[int, ...],
) -> None:
    with pytest.raises(InvalidInput) as caught:
        combine_scores(np.zeros(shape, dtype=np.float32), QueryCombination())
    assert caught.value.field == "scores"
    assert str(shape) in str(caught.value)  # the caller sees what was sent
