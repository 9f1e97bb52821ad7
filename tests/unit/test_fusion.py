"""Calibrated score fusion of the primary and the aligned view (ADR 0016)."""

from __future__ import annotations

import pytest

from worldbook.core.fusion import calibrate, fuse, ranked


def test_calibrate_moves_the_aligned_scores_onto_the_primary_scale() -> None:
    primary = {"a": 0.9, "b": 0.7, "c": 0.5}
    aligned = {"a": 0.3, "b": 0.2, "c": 0.1}
    moved = calibrate(aligned, primary)
    assert moved == pytest.approx(primary)


def test_a_flat_aligned_view_carries_only_the_primary_mean() -> None:
    moved = calibrate({"a": 0.4, "b": 0.4}, {"a": 1.0, "b": 0.0})
    assert moved == pytest.approx({"a": 0.5, "b": 0.5})


def test_the_aligned_view_can_lift_an_entry_over_the_primary_leader() -> None:
    primary = {"near": 0.80, "described": 0.70, "far": 0.40}
    aligned = {"described": 0.60, "near": 0.30, "far": 0.20}
    fused = fuse(primary, aligned, 1.0)
    assert [key for key, _ in ranked(fused, 3)] == ["described", "near", "far"]


def test_an_entry_only_one_view_found_gets_the_other_views_floor() -> None:
    fused = fuse({"a": 0.8, "b": 0.6}, {"a": 0.5, "c": 0.9, "d": 0.1}, 1.0)
    assert set(fused) == {"a", "b", "c", "d"}
    assert fused["c"] > fused["d"]
    assert fused["b"] < fused["a"]


def test_blind_entries_keep_their_primary_score_and_are_not_added() -> None:
    fused = fuse({"el": 0.8, "en": 0.6}, {"el": 0.1, "en": 0.9, "vi": 0.95}, 1.0, {"el", "vi"})
    assert fused["el"] == 0.8
    assert "vi" not in fused


def test_weight_zero_is_the_primary_exactly_and_negative_weight_is_refused() -> None:
    primary = {"a": 0.3, "b": 0.2}
    assert fuse(primary, {"b": 0.9, "c": 0.8}, 0.0) == primary
    with pytest.raises(ValueError):
        fuse(primary, {}, -1.0)


def test_ranked_keeps_the_mapping_order_on_ties() -> None:
    assert ranked({"x": 0.5, "y": 0.5, "z": 0.9}, 2) == [("z", 0.9), ("x", 0.5)]


def test_the_aligned_view_tells_romanian_apart_and_keeps_the_engines_guess_otherwise() -> None:
    from worldbook.service.aligned_view import USE_LANGUAGES, query_language, text_language

    assert text_language("Țara Românească și Moldova erau state vecine.") == "ro"
    assert text_language("Le roi est mort, vive le roi.") == "fr"
    assert query_language(["Ποιος κρατά το φάρο;"]) not in USE_LANGUAGES
    assert query_language(["Who keeps the lighthouse?"]) in USE_LANGUAGES


def test_turkish_is_not_taken_for_romanian() -> None:
    from worldbook.core.language_id import detect_language
    from worldbook.service.aligned_view import text_language

    turkish = "Şehrin en eski çarşısı nerede, kim işletiyor?"  # ş: s with a cedilla
    assert text_language(turkish) == detect_language(turkish) != "ro"


def test_an_entrys_own_weight_replaces_the_views_weight_for_it_alone() -> None:
    primary = {"same": 0.80, "other": 0.70, "far": 0.40}
    aligned = {"other": 0.60, "same": 0.45, "far": 0.20}
    moved = calibrate(aligned, primary)
    fused = fuse(primary, aligned, 1.0, weights={"other": 3.0})
    assert fused["other"] == pytest.approx((0.70 + 3.0 * moved["other"]) / 4.0)
    assert fused["same"] == pytest.approx((0.80 + moved["same"]) / 2.0)
    assert fuse(primary, aligned, 1.0, weights={}) == fuse(primary, aligned, 1.0)
