"""classic.md §1 rules 12–15: secondary logic, constant, disabled, probability."""

from __future__ import annotations

import pytest

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.classic import AND_ALL, AND_ANY, NOT_ALL, NOT_ANY, ChatState, EntryChatState
from worldbook.core.classic.state import TimedEffect

SECONDARY = ("steward", "king")


@pytest.mark.parametrize(
    ("logic", "text", "fires"),
    [
        (AND_ANY, "Gondor", False),
        (AND_ANY, "Gondor steward", True),
        (AND_ALL, "Gondor steward", False),
        (AND_ALL, "Gondor steward king", True),
        (NOT_ANY, "Gondor steward", False),
        (NOT_ANY, "Gondor", True),
        (NOT_ALL, "Gondor steward king", False),
        (NOT_ALL, "Gondor steward", True),
        (NOT_ALL, "Gondor", True),
    ],
)
def test_rule_12_secondary_logics(logic: int, text: str, fires: bool) -> None:
    b = book(entry("e", "Gondor", secondary_keys=SECONDARY, selective_logic=logic))
    result = run(b, chat(text))
    assert (ids(result) == ["e"]) is fires
    if not fires:
        record = fate(result, "e")
        assert record.fate == "secondary"
        assert "secondary keys" in record.reason


def test_rule_12_secondary_keys_never_trigger_alone() -> None:
    b = book(entry("e", "Gondor", secondary_keys=SECONDARY, selective_logic=NOT_ANY))
    result = run(b, chat("the steward and the king"))
    assert ids(result) == []
    assert fate(result, "e").fate == "no_match"


def test_rule_12_logic_ignored_without_secondary_keys_or_selective() -> None:
    plain = book(entry("e", "Gondor", selective_logic=AND_ALL))
    assert ids(run(plain, chat("Gondor"))) == ["e"]
    off = book(entry("e", "Gondor", secondary_keys=SECONDARY, selective=False))
    assert ids(run(off, chat("Gondor"))) == ["e"]  # SillyTavern: selective && keysecondary


def test_rule_12_failure_reason_names_the_keys() -> None:
    b = book(entry("e", "Gondor", secondary_keys=SECONDARY, selective_logic=AND_ALL))
    assert "'king'" in fate(run(b, chat("Gondor steward")), "e").reason


def test_rule_13_disabled_never_activates_by_any_path() -> None:
    b = book(
        entry("key", "Gondor", enabled=False),
        entry("const", constant=True, enabled=False),
        entry("deco", decorators=("@@activate",), enabled=False),
        entry("src", content="Rohan rides.", constant=True),
        entry("rec", "Rohan", enabled=False),
        entry("sticky", "Mordor", enabled=False, sticky=5),
        entry("kept", "Shire", enabled=False, decorators=("@@keep_activate_after_match",)),
        recursive_scanning=True,
    )
    state = ChatState(
        {
            "b": {
                "sticky": EntryChatState(sticky=TimedEffect(1, 9)),
                "kept": EntryChatState(matched=True),
            }
        }
    )
    result = run(b, chat("Gondor, Rohan"), state, chat_length=3)
    assert ids(result) == ["src"]
    for entry_id in ("key", "const", "deco", "rec", "sticky", "kept"):
        assert fate(result, entry_id).fate == "disabled"


def test_rule_14_constant_needs_no_key_and_ignores_secondary_logic() -> None:
    b = book(
        entry("c", constant=True, secondary_keys=("steward",), selective_logic=NOT_ANY),
        entry("k", "Gondor"),
    )
    result = run(b, chat("the steward"))
    assert ids(result) == ["c"]
    assert result.activations[0].via == "constant"


def test_rule_15_probability_zero_never_hundred_always_constants_too() -> None:
    b = book(
        entry("never", "Gondor", probability=0),
        entry("always", "Gondor", probability=100),
        entry("const0", constant=True, probability=0),
    )
    for seed in range(20):
        result = run(b, chat("Gondor"), seed=seed)
        assert ids(result) == ["always"]
        assert fate(result, "const0").fate == "probability"


def test_rule_15_draw_is_seeded_stable_and_shown() -> None:
    b = book(entry("half", "Gondor", probability=50))
    outcomes = {seed: ids(run(b, chat("Gondor"), seed=seed)) == ["half"] for seed in range(40)}
    assert set(outcomes.values()) == {True, False}  # a coin, not a constant
    for seed, won in outcomes.items():  # same turn, same draw
        assert (ids(run(b, chat("Gondor"), seed=seed)) == ["half"]) is won
    lost = next(seed for seed, won in outcomes.items() if not won)
    record = fate(run(b, chat("Gondor"), seed=lost), "half")
    assert record.fate == "probability"
    assert "≥ 50" in record.reason and "probability draw" in record.reason


def test_rule_15_draw_depends_on_chat_and_turn() -> None:
    b = book(entry("half", "Gondor", probability=50))
    by_chat = {ids(run(b, chat("Gondor"), chat_id=f"c{i}")) == ["half"] for i in range(40)}
    by_turn = {ids(run(b, chat("Gondor"), chat_length=i)) == ["half"] for i in range(40)}
    assert by_chat == {True, False}
    assert by_turn == {True, False}


def test_rule_15_failed_entry_does_not_feed_recursion() -> None:
    b = book(
        entry("lost", "Gondor", content="Rohan is near.", probability=0),
        entry("r", "Rohan"),
        recursive_scanning=True,
    )
    assert ids(run(b, chat("Gondor"))) == []


def test_rule_15_probability_decorator_overrides_the_field() -> None:
    b = book(entry("e", "Gondor", probability=100, decorators=("@@probability 0",)))
    assert ids(run(b, chat("Gondor"))) == []
    b2 = book(entry("e", "Gondor", probability=0, decorators=("@@probability 100",)))
    assert ids(run(b2, chat("Gondor"))) == ["e"]
