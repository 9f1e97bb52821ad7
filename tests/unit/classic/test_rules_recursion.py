"""classic.md §1 rules 22–24: recursion, and the per-entry recursion switches."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.classic import AND_ANY, NOT_ANY

CHAIN = (
    entry("a", "Alpha", content="Alpha leads to Beta."),
    entry("b", "Beta", content="Beta leads to Gamma."),
    entry("c", "Gamma", content="Gamma leads to Delta."),
    entry("d", "Delta", content="Delta ends it."),
)


def test_rule_22_recursion_off_content_never_triggers() -> None:
    result = run(book(*CHAIN, recursive_scanning=False), chat("Alpha"))
    assert ids(result) == ["a"]
    assert fate(result, "b").fate == "no_match"


def test_rule_22_recursion_on_scans_activated_content_constants_included() -> None:
    b = book(
        entry("k", constant=True, content="The Beta road."),
        entry("b", "Beta"),
        recursive_scanning=True,
    )
    result = run(b, chat("nothing"))
    assert ids(result) == ["k", "b"]  # equal orders: list order
    beta = next(a for a in result.activations if a.entry_id == "b")
    assert beta.via == "recursion" and beta.pass_no == 2
    hit = beta.hits[0]
    assert (hit.source, hit.from_entry, hit.from_title) == ("content", "k", "Entry k")
    assert "content of 'Entry k'" in beta.reason


def test_rule_22_decorator_lines_are_not_scanned() -> None:
    b = book(
        entry("k", constant=True, content="@@mention Beta\nNothing here."),
        entry("b", "Beta"),
        recursive_scanning=True,
    )
    assert ids(run(b, chat("x"))) == ["k"]


def test_rule_23_three_passes_in_all() -> None:
    result = run(book(*CHAIN, recursive_scanning=True), chat("Alpha"))
    assert ids(result) == ["a", "b", "c"]  # A (chat) → B → C, not D
    assert [a.pass_no for a in result.activations] == [1, 2, 3]
    assert result.passes == 3
    assert fate(result, "d").fate == "no_match"


def test_rule_24_entries_of_one_pass_do_not_see_each_other() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha names Beta."),
        entry("b", "Beta"),
        recursive_scanning=True,
    )
    result = run(b, chat("Alpha"))
    beta = next(a for a in result.activations if a.entry_id == "b")
    assert beta.pass_no == 2  # not activated in the pass that activated Alpha


def test_rule_24_recursion_only_adds() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha brings the orc."),
        entry("n", "Alpha", secondary_keys=("orc",), selective_logic=NOT_ANY),
        recursive_scanning=True,
    )
    result = run(b, chat("Alpha"))
    assert ids(result) == ["a", "n"]  # activated in pass 1; the orc arriving later removes nothing


def test_rule_24_later_secondary_logic_sees_recursed_text() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha and the steward. The orc is here."),
        entry("late", "Gondor", secondary_keys=("steward",), selective_logic=AND_ANY),
        entry("blocked", "steward", secondary_keys=("orc",), selective_logic=NOT_ANY),
        recursive_scanning=True,
    )
    result = run(b, chat("Alpha at Gondor"))
    assert "late" in ids(result)  # its secondary key only appears in Alpha's content
    late = next(a for a in result.activations if a.entry_id == "late")
    assert late.pass_no == 2 and late.via == "keyword"  # primary key from the chat
    assert fate(result, "blocked").fate == "secondary"  # not_any sees the recursed orc


def test_exclude_recursion_only_activates_from_the_chat() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha names Beta and Gamma."),
        entry("b", "Beta", exclude_recursion=True),
        entry("g", "Gamma", exclude_recursion=True),
        recursive_scanning=True,
    )
    result = run(b, chat("Gamma"))
    assert ids(result) == ["g"]  # from the chat it activates as usual
    assert fate(result, "b").fate == "no_match"
    result = run(b, chat("Alpha"))
    assert ids(result) == ["a"]
    assert fate(result, "b").fate == "recursion"
    assert "excluded from recursion" in fate(result, "b").reason


def test_prevent_recursion_keeps_content_out_of_recursion() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha names Beta.", prevent_recursion=True),
        entry("b", "Beta"),
        recursive_scanning=True,
    )
    assert ids(run(b, chat("Alpha"))) == ["a"]


def test_delay_until_recursion_waits_for_a_recursion_pass() -> None:
    b = book(
        entry("a", "Alpha", content="Alpha names Beta."),
        entry("b", "Beta"),
        entry("late", "Alpha", delay_until_recursion=1),
        recursive_scanning=True,
    )
    result = run(b, chat("Alpha"))
    late = next(a for a in result.activations if a.entry_id == "late")
    assert late.pass_no == 2  # matched by the chat, but only in the recursion pass
    alone = book(entry("late", "Alpha", delay_until_recursion=1), recursive_scanning=True)
    result = run(alone, chat("Alpha"))  # nothing to recurse on: no recursion pass
    assert ids(result) == []
    assert fate(result, "late").fate == "recursion"


def test_delay_until_recursion_levels_open_in_turn() -> None:
    b = book(
        entry("k", constant=True, content="nothing to see"),
        entry("l1", "Alpha", delay_until_recursion=1, prevent_recursion=True),
        entry("l2", "Alpha", delay_until_recursion=2),
        recursive_scanning=True,
    )
    result = run(b, chat("Alpha"))
    passes = {a.entry_id: a.pass_no for a in result.activations}
    # Level 2 opens when level 1 has nothing more to recurse on (SillyTavern's levels).
    assert passes == {"k": 1, "l1": 2, "l2": 3}
    carried = book(
        *b.entries[:1],
        entry("l1", "Alpha", delay_until_recursion=1),
        *b.entries[2:],
        recursive_scanning=True,
    )
    result = run(carried, chat("Alpha"))
    assert ids(result) == ["k", "l1"]  # l1's content keeps level 1 open through pass 3
    assert "level 2" in fate(result, "l2").reason


def test_a_book_without_recursion_is_not_triggered_by_other_content() -> None:
    source = book(
        entry("a", "Alpha", content="Alpha names Beta.", book_id="s"),
        book_id="s",
        recursive_scanning=True,
    )
    still = book(entry("b", "Beta", book_id="t"), book_id="t", recursive_scanning=False)
    moving = book(entry("b", "Beta", book_id="m"), book_id="m", recursive_scanning=True)
    result = run((source, still, moving), chat("Alpha"))
    assert [(a.book_id, a.entry_id) for a in result.activations] == [("s", "a"), ("m", "b")]
