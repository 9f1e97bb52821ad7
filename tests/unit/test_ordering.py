"""Sparse list positions (pure): any sequence of moves matches a plain list model."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from worldbook.core.ordering import GAP, place, renumber, spread_between


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[int, list[tuple[list[int], str, int]]]:
    n = draw(st.integers(2, 30))
    ops = []
    for _ in range(draw(st.integers(1, 40))):
        moving = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n - 1, unique=True))
        kind = draw(st.sampled_from(["first", "last", "before", "after"]))
        anchor = draw(st.sampled_from([i for i in range(n) if i not in moving]))
        ops.append((moving, kind, anchor))
    return n, ops


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_moves_match_a_list_model(scenario: tuple[int, list[tuple[list[int], str, int]]]) -> None:
    n, ops = scenario
    ids = [f"e{i}" for i in range(n)]
    positions = renumber(ids)
    model = list(ids)
    for moving_idx, kind, anchor_idx in ops:
        moving_set = {ids[i] for i in moving_idx}
        moving = [e for e in model if e in moving_set]  # they keep their relative order
        rest = [e for e in model if e not in moving_set]
        anchor = ids[anchor_idx]
        target = kind if kind in ("first", "last") else (kind, anchor)
        order = sorted(((e, positions[e]) for e in rest), key=lambda x: x[1])
        positions.update(place(order, moving, target))  # type: ignore[arg-type]
        cut = {"first": 0, "last": len(rest)}.get(kind)
        if cut is None:
            cut = rest.index(anchor) + (1 if kind == "after" else 0)
        model = rest[:cut] + moving + rest[cut:]
        assert sorted(ids, key=lambda e: positions[e]) == model
        assert len(set(positions.values())) == n


def test_spread_uses_the_gap_then_gives_up() -> None:
    assert spread_between(0, 4, ["a", "b", "c"]) == {"a": 1, "b": 2, "c": 3}
    assert spread_between(0, 3, ["a", "b", "c"]) is None
    assert spread_between(None, 0, ["a", "b"]) == {"a": -2 * GAP, "b": -GAP}
    assert spread_between(5, None, ["a"]) == {"a": 5 + GAP}


def test_only_moved_rows_change_while_the_gap_lasts() -> None:
    ids = [f"e{i}" for i in range(2000)]
    positions = renumber(ids)
    rest = [(e, positions[e]) for e in ids if e != "e1999"]
    assert place(rest, ["e1999"], ("after", "e0")) == {"e1999": GAP + GAP // 2}
