"""classic.md §1 rules 16–21: decorators."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.classic.decorators import parse_decorators


def test_rule_16_unknown_decorators_are_ignored_and_stripped() -> None:
    b = book(entry("e", "Gondor", content="@@frobnicate 3\n@@depth 4\nThe realm.\n@@not_a_head"))
    result = run(b, chat("Gondor"))
    assert ids(result) == ["e"]
    assert result.activations[0].text == "The realm.\n@@not_a_head"  # only the head block


def test_rule_16_fallback_applies_after_an_unrecognised_decorator() -> None:
    d = parse_decorators(["@@future_thing 1", "@@@scan_depth 7"])
    assert d.scan_depth == 7
    d = parse_decorators(["@@scan_depth 2", "@@@scan_depth 7"])
    assert d.scan_depth == 2  # the recognised one stands; its fallback is skipped
    d = parse_decorators(["@@x", "@@@y", "@@@scan_depth 5", "@@@scan_depth 9"])
    assert d.scan_depth == 5  # a chain: the first fallback that applies ends it
    d = parse_decorators(["@@scan_depth lots", "@@@scan_depth 3"])
    assert d.scan_depth == 3  # an invalid value counts as not applied


def test_rule_16_fallback_in_a_turn() -> None:
    b = book(entry("e", "Gondor", decorators=("@@unknown_gate 3", "@@@dont_activate")))
    assert ids(run(b, chat("Gondor"))) == []
    b2 = book(entry("e", "Gondor", decorators=("@@activate_only_after 0", "@@@dont_activate")))
    assert ids(run(b2, chat("Gondor"))) == ["e"]


def test_rule_16_first_line_of_a_name_wins() -> None:
    assert parse_decorators(["@@scan_depth 1", "@@scan_depth 9"]).scan_depth == 1
    assert parse_decorators(["@@role user", "@@role assistant"]).role == "user"


def test_rule_17_activate_needs_no_keys_and_beats_dont_activate() -> None:
    b = book(
        entry("a", decorators=("@@activate",)),
        entry("both", decorators=("@@dont_activate", "@@activate")),
        entry("both2", decorators=("@@activate", "@@dont_activate")),
        entry("never", "Gondor", decorators=("@@dont_activate",)),
        entry("never_const", constant=True, decorators=("@@dont_activate",)),
    )
    result = run(b, chat("Gondor"))
    assert ids(result) == ["a", "both", "both2"]
    assert fate(result, "never").fate == "decorator"
    assert fate(result, "never_const").reason == "@@dont_activate"


def test_rule_18_activate_only_after_counts_assistant_messages() -> None:
    b = book(entry("e", "Gondor", decorators=("@@activate_only_after 2",)))
    # 3 user messages, 1 reply: RisuAI's "all messages + 1" (= 5) would let it in.
    one_reply = chat("Gondor", "reply", "Gondor", "x", "Gondor", first="user")
    one_reply = [one_reply[0], one_reply[1], one_reply[2], one_reply[4]]
    result = run(b, one_reply)
    assert ids(result) == []
    assert fate(result, "e").fate == "decorator"
    assert "1 assistant messages" in fate(result, "e").reason
    assert ids(run(b, chat("a", "reply", "b", "reply", "Gondor"))) == ["e"]
    assert ids(run(b, chat("Gondor"), assistant_messages=2)) == ["e"]  # the chat's own count


def test_rule_18_activate_only_every() -> None:
    b = book(entry("e", "Gondor", decorators=("@@activate_only_every 3",)))
    fired = [n for n in range(10) if ids(run(b, chat("Gondor"), assistant_messages=n))]
    assert fired == [0, 3, 6, 9]


def test_rule_19_exclude_and_additional_keys() -> None:
    b = book(
        entry("ex", "Gondor", decorators=("@@exclude_keys orc, troll",)),
        entry("add", "Gondor", decorators=("@@additional_keys steward, king",)),
        entry("add2", "Gondor", decorators=("@@additional_keys steward", "@@additional_keys king")),
    )
    result = run(b, chat("Gondor and a troll"))
    assert ids(result) == []
    assert "troll" in fate(result, "ex").reason
    assert "@@additional_keys" in fate(result, "add").reason
    assert ids(run(b, chat("Gondor steward"))) == ["ex", "add"]  # each line is a requirement
    assert ids(run(b, chat("Gondor steward king"))) == ["ex", "add", "add2"]  # list order


def test_rule_19_decorator_keys_use_the_entry_options() -> None:
    b = book(entry("e", "Gondor", decorators=("@@exclude_keys orc",)))
    assert ids(run(b, chat("Gondor and the orcs"))) == ["e"]  # whole words: orc ∉ orcs
    loose = book(entry("e", "Gondor", whole_words=False, decorators=("@@exclude_keys orc",)))
    assert ids(run(loose, chat("Gondor and the orcs"))) == []


def test_rule_20_role_decorator_and_default() -> None:
    b = book(
        entry("u", "Gondor", decorators=("@@role user",)),
        entry("a", "Gondor", decorators=("@@role assistant",)),
        entry("s", "Gondor"),
        entry("bad", "Gondor", role="user", decorators=("@@role narrator",)),
    )
    roles = {a.entry_id: a.role for a in run(b, chat("Gondor")).activations}
    assert roles == {"u": "user", "a": "assistant", "s": "system", "bad": "user"}


def test_rule_21_priority_and_order_decorators() -> None:
    b = book(
        entry(
            "low", "Gondor", content="one two three four", priority=1, decorators=("@@priority 50",)
        ),
        entry("high", "Gondor", content="one two three four", priority=10),
        entry("first", "Gondor", content="x", order=1, decorators=("@@order 500",)),
    )
    result = run(b, chat("Gondor"), budget=5)
    assert ids(result) == ["low"]  # @@priority 50 beats 10 at the budget
    result = run(b, chat("Gondor"), budget=100)
    assert ids(result)[0] == "first"  # @@order 500 places it first
