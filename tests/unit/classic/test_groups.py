"""Inclusion groups (classic.md §2.5): weights, override, scoring, sticky, earlier passes."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.classic import ChatState, EntryChatState, TimedEffect


def test_only_one_member_of_a_group_activates() -> None:
    b = book(
        entry("rain", "weather", group="sky"),
        entry("sun", "weather", group="sky"),
        entry("free", "weather"),
    )
    for seed in range(10):
        result = run(b, chat("the weather"), seed=seed)
        chosen = [i for i in ids(result) if i in ("rain", "sun")]
        assert len(chosen) == 1 and "free" in ids(result)
        loser = "sun" if chosen == ["rain"] else "rain"
        record = fate(result, loser)
        assert record.fate == "group"
        assert f"lost inclusion group 'sky' to 'Entry {chosen[0]}'" in record.reason
        assert "weighted draw" in record.reason


def test_weights_decide_the_draw_and_it_is_seeded() -> None:
    b = book(
        entry("heavy", "weather", group="sky", group_weight=100),
        entry("none", "weather", group="sky", group_weight=0),
    )
    picks = {ids(run(b, chat("weather"), seed=s))[0] for s in range(30)}
    assert picks == {"heavy"}
    even = book(entry("a", "weather", group="sky"), entry("b", "weather", group="sky"))
    picks_by_seed = {s: ids(run(even, chat("weather"), seed=s)) for s in range(30)}
    assert {p[0] for p in picks_by_seed.values()} == {"a", "b"}
    assert all(ids(run(even, chat("weather"), seed=s)) == p for s, p in picks_by_seed.items())


def test_group_override_highest_order_wins() -> None:
    b = book(
        entry("low", "weather", group="sky", group_override=True, order=10),
        entry("high", "weather", group="sky", group_override=True, order=90),
        entry("plain", "weather", group="sky", order=100, group_weight=10_000),
    )
    for seed in range(10):
        result = run(b, chat("weather"), seed=seed)
        assert ids(result) == ["high"]
        assert "group override" in fate(result, "plain").reason


def test_group_scoring_keeps_the_best_key_score() -> None:
    b = book(
        entry("one", "storm", group="sky", group_scoring=True),
        entry("two", "storm", "thunder", group="sky", group_scoring=True),
    )
    for seed in range(10):
        result = run(b, chat("storm and thunder"), seed=seed)
        assert ids(result) == ["two"]
        assert "key score (1 < 2)" in fate(result, "one").reason
    book_level = book(
        entry("one", "storm", group="sky"),
        entry("two", "storm", "thunder", group="sky"),
        group_scoring=True,
    )
    assert ids(run(book_level, chat("storm and thunder"))) == ["two"]
    off = book(entry("one", "storm", group="sky"), entry("two", "storm", "thunder", group="sky"))
    assert {ids(run(off, chat("storm and thunder"), seed=s))[0] for s in range(30)} == {
        "one",
        "two",
    }


def test_a_sticky_member_wins_its_group() -> None:
    b = book(
        entry("old", "weather", group="sky", sticky=5),
        entry("new", "weather", group="sky", group_weight=10_000),
    )
    state = ChatState({"b": {"old": EntryChatState(sticky=TimedEffect(1, 9))}})
    for seed in range(10):
        result = run(b, chat("weather"), state, chat_length=3, seed=seed)
        assert ids(result) == ["old"]
        assert "to sticky" in fate(result, "new").reason


def test_a_group_activated_in_an_earlier_pass_takes_nobody_new() -> None:
    b = book(
        entry("first", "weather", group="sky, sea", content="the tide rises"),
        entry("later", "tide", group="sea"),  # listed second in "first": bug 13 would miss it
        recursive_scanning=True,
    )
    result = run(b, chat("weather"))
    assert ids(result) == ["first"]
    assert "already has 'Entry first'" in fate(result, "later").reason


def test_an_entry_in_two_groups_must_win_both() -> None:
    b = book(
        entry("both", "weather", group="sky, sea", group_override=True, order=1),
        entry("sea_only", "weather", group="sea", group_override=True, order=99),
    )
    result = run(b, chat("weather"))
    assert ids(result) == ["sea_only"]  # lost "sea", so it is out of "sky" too
