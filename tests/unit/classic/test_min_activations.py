"""Minimum activations (classic.md §2.5): widen the book depth one message at a time."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run

MESSAGES = chat("Gondor far back", "a", "b", "Rohan recent", "c")


def test_min_activations_widens_the_window_until_enough() -> None:
    b = book(entry("g", "Gondor"), entry("r", "Rohan"), scan_depth=1, min_activations=2)
    result = run(b, MESSAGES)
    assert ids(result) == ["g", "r"]
    causes = {a.entry_id: a.cause for a in result.activations}
    assert causes == {"g": "min_activations", "r": "min_activations"}
    assert "window widened to 5 messages" in result.activations[0].reason


def test_min_activations_stops_when_reached() -> None:
    b = book(entry("g", "Gondor"), entry("r", "Rohan"), scan_depth=1, min_activations=1)
    assert ids(run(b, MESSAGES)) == ["r"]


def test_without_min_activations_the_window_stays() -> None:
    b = book(entry("g", "Gondor"), entry("r", "Rohan"), scan_depth=1)
    result = run(b, MESSAGES)
    assert ids(result) == []
    assert fate(result, "g").fate == "no_match"


def test_min_activations_depth_cap() -> None:
    b = book(
        entry("g", "Gondor"),
        entry("r", "Rohan"),
        scan_depth=1,
        min_activations=2,
        min_activations_depth_max=3,
    )
    assert ids(run(b, MESSAGES)) == ["r"]


def test_entries_with_their_own_depth_do_not_widen() -> None:
    b = book(
        entry("g", "Gondor", scan_depth=1), entry("r", "Rohan"), scan_depth=1, min_activations=2
    )
    assert ids(run(b, MESSAGES)) == ["r"]
