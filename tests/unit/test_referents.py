"""Referent links for follow-ups (ADR 0016)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldbook.core.referents import backlinks, boosted, linked, referent_weights


def test_referents_fade_per_message_back_and_keep_their_latest_mention() -> None:
    weights = referent_weights([{"queen"}, {"harbour"}, set(), {"queen"}], 0.85)
    assert weights == pytest.approx({"queen": 1.0, "harbour": 0.85**2})


def test_backlinks_invert_the_names_in_lore_and_skip_self_links() -> None:
    links = backlinks({"sister": ["queen"], "queen": ["queen", "harbour"], "guard": ["queen"]})
    assert links == {"queen": frozenset({"sister", "guard"}), "harbour": frozenset({"queen"})}


def test_linked_entries_take_their_best_referents_weight_but_not_referents() -> None:
    links = {"queen": frozenset({"sister", "harbour"}), "harbour": frozenset({"queen"})}
    found = linked({"queen": 0.85, "harbour": 1.0}, links)
    assert found == {"sister": 0.85}


def test_a_linked_entry_rises_with_the_new_messages_similarity_only() -> None:
    hits = [("inn", 0.30), ("queen", 0.25), ("sister", 0.20)]
    links = {"sister": 1.0}
    lifted = boosted(hits, links, {"sister": 0.08}, 2.0)
    assert lifted[0][0] == "sister"
    assert lifted[0][1] == pytest.approx(0.36)
    # A new message unlike the linked entry (topic changed): nothing moves.
    assert boosted(hits, links, {"sister": -0.05}, 2.0) == hits


def test_a_linked_entry_missing_from_the_hits_joins_from_the_floor() -> None:
    lifted = boosted([("a", 0.3), ("b", 0.1)], {"c": 1.0}, {"c": 0.05}, 2.0)
    assert [key for key, _ in lifted] == ["a", "c", "b"]
    assert lifted[1][1] == pytest.approx(0.2)


hits = st.lists(
    st.tuples(st.text(max_size=3), st.floats(-1, 1, allow_nan=False)),
    max_size=10,
    unique_by=lambda h: h[0],
)


@given(hits, st.dictionaries(st.text(max_size=3), st.floats(-1, 1)), st.floats(0, 5))
def test_without_referents_the_ranking_is_unchanged(
    found: list[tuple[str, float]], newest: dict[str, float], weight: float
) -> None:
    links = linked(referent_weights([set(), set()], 0.85), {"x": frozenset({"y"})})
    assert boosted(found, links, newest, weight) == found
    assert boosted(found, {"y": 1.0}, newest, 0.0) == found
