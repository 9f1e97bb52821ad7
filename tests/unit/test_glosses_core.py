"""The pure part of the glosses (ADR 0023): the reader-languages setting, which languages an
entry needs, which generated lines are kept, and how a gloss lifts a score."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldbook.core.glosses import (
    READER_LANGUAGES_MAX,
    Gloss,
    check_reader_languages,
    current_glosses,
    gloss_model_id,
    gloss_problem,
    gloss_text,
    languages_to_write,
    lift_by_glosses,
    reader_languages,
)
from worldbook.core.language_id import detect_language
from worldbook.core.limits import validate_book_settings
from worldbook.errors import InvalidInput


def test_reader_languages_are_read_leniently_and_checked_strictly() -> None:
    assert reader_languages({}) == ()
    assert reader_languages({"reader_languages": ["ko", "pt", "ko", "xx", 3]}) == ("ko", "pt")
    validate_book_settings({"reader_languages": ["ko", "zh"]})
    with pytest.raises(InvalidInput, match=r"settings\.reader_languages has unknown.*'klingon'"):
        validate_book_settings({"reader_languages": ["ko", "klingon"]})
    with pytest.raises(InvalidInput, match="must be a list of language codes"):
        validate_book_settings({"reader_languages": "ko"})
    many = ["ar", "de", "el", "en", "es", "fr", "hi", "it", "ja"]
    assert len(many) > READER_LANGUAGES_MAX
    with pytest.raises(InvalidInput, match=f"the most is {READER_LANGUAGES_MAX}"):
        check_reader_languages(many, field="settings.reader_languages")


def test_an_entry_needs_every_reader_language_but_its_own() -> None:
    assert languages_to_write("pt", ["ko", "pt", "zh", "ko"]) == ("ko", "zh")
    assert languages_to_write("en", []) == ()


@pytest.mark.parametrize(
    ("name", "gist", "language", "problem"),
    [
        ("부두 형제단", "항구 노동자들의 오래된 조합이다.", "ko", None),
        ("", "항구 노동자들의 오래된 조합이다.", "ko", "empty name or gist"),
        ("부두 형제단", "The old union of the dock workers.", "ko", "gist written in en, not ko"),
        ("부두 형제단", "첫 줄.\n둘째 줄.", "ko", "gist of more than one line"),
        ("Il Dottore", "Il Dottore", "it", "gist repeats the name"),
        ("x" * 121, "항구 노동자들의 오래된 조합이다.", "ko", "name longer than 120 characters"),
    ],
)
def test_a_gloss_is_kept_only_when_it_is_one_line_in_its_language(
    name: str, gist: str, language: str, problem: str | None
) -> None:
    assert gloss_problem(name, gist, language, detect_language) == problem


def test_gloss_text_and_model_id() -> None:
    gloss = Gloss("e1", "ko", "부두 형제단", "항구의 조합.", "h1", "m")
    assert gloss_text(gloss) == "부두 형제단\n항구의 조합."
    assert gloss_model_id("e5@1", "ko") == "e5@1+gloss-ko"
    stale = Gloss("e2", "ko", "n", "g", "old", "m")
    assert current_glosses([gloss, stale], {"e1": "h1", "e2": "new"}) == [gloss]


def test_a_gloss_lifts_only_past_its_margin() -> None:
    scores = {"a": 0.30, "b": 0.10}
    lifted = lift_by_glosses(scores, {"a": 0.31, "b": 0.40, "c": 0.25}, margin=0.05)
    assert lifted["a"] == 0.30  # its own text matched about as well: the author's words stand
    assert lifted["b"] == pytest.approx(0.35)
    assert lifted["c"] == pytest.approx(0.20)  # found by a gloss only, below it by the margin
    assert lift_by_glosses(scores, {}, margin=0.05) == scores


scores_st = st.dictionaries(st.sampled_from("abcdefgh"), st.floats(-1, 1), max_size=8)


@given(scores_st, scores_st, st.floats(0, 1))
def test_glosses_never_lower_a_score_nor_lift_past_gloss_minus_margin(
    scores: dict[str, float], glosses: dict[str, float], margin: float
) -> None:
    lifted = lift_by_glosses(scores, glosses, margin)
    assert set(lifted) == set(scores) | set(glosses)
    for key, value in lifted.items():
        if key in scores:
            assert value >= scores[key]
        if key in glosses and (key not in scores or value > scores[key]):
            assert value == glosses[key] - margin
