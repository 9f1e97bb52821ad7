"""classic.md §1 rules 25–27: budget, placement, rendered text."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run

WORDS5 = "one two three four five"  # 5 tokens under the word tokenizer


def test_rule_25_priority_decides_survivors() -> None:
    b = book(
        entry("low", "Gondor", content=WORDS5, priority=1, order=900),
        entry("high", "Gondor", content=WORDS5, priority=9, order=1),
    )
    result = run(b, chat("Gondor"), budget=5)
    assert ids(result) == ["high"]  # placement order (900 first) does not decide
    assert fate(result, "low").fate == "over_budget"
    assert result.used == 5


def test_rule_25_first_overflow_and_everything_lower_dropped_no_backfill() -> None:
    b = book(
        entry("p9", "Gondor", content=WORDS5, priority=9),
        entry("p8_big", "Gondor", content=WORDS5 + " six seven", priority=8),
        entry("p7_small", "Gondor", content="tiny", priority=7),
    )
    result = run(b, chat("Gondor"), budget=8)
    assert ids(result) == ["p9"]  # "tiny" would fit in the 3 left, but is not back-filled
    big, small = fate(result, "p8_big"), fate(result, "p7_small")
    assert big.fate == small.fate == "over_budget"
    assert "needs 7 tokens, 5 of 8 used" in big.reason
    assert "not back-filled" in small.reason


def test_rule_25_constants_compete_and_nothing_is_kept_for_being_first() -> None:
    b = book(
        entry("const", constant=True, content=WORDS5, priority=1),
        entry("key", "Gondor", content=WORDS5, priority=2),
    )
    result = run(b, chat("Gondor"), budget=7)
    assert ids(result) == ["key"]
    assert fate(result, "const").fate == "over_budget"
    huge = book(entry("big", "Gondor", content=WORDS5 * 3, priority=100), entry("s", "Gondor"))
    result = run(huge, chat("Gondor"), budget=10)
    assert ids(result) == []  # the highest priority alone overflows: everything goes
    assert result.used == 0


def test_rule_25_priority_defaults_to_order() -> None:
    b = book(
        entry("o1", "Gondor", content=WORDS5, order=1),
        entry("o9", "Gondor", content=WORDS5, order=9),
    )
    result = run(b, chat("Gondor"), budget=5)
    assert ids(result) == ["o9"]
    assert result.activations[0].priority == 9


def test_rule_25_budget_is_the_highest_of_the_books_unless_given() -> None:
    small = book(entry("a", "Gondor", content=WORDS5, book_id="s"), book_id="s", token_budget=100)
    big = book(
        entry("b", "Gondor", content=WORDS5 * 30, book_id="t"), book_id="t", token_budget=1000
    )
    result = run((small, big), chat("Gondor"))
    assert result.budget == 1000 and len(result.activations) == 2
    assert run((small, big), chat("Gondor"), budget=10).budget == 10


def test_rule_25_tokens_counted_when_not_given() -> None:
    b = book(
        entry("given", "Gondor", content=WORDS5, tokens=50),
        entry("counted", "Gondor", content=WORDS5),
    )
    tokens = {a.entry_id: a.tokens for a in run(b, chat("Gondor")).activations}
    assert tokens == {"given": 50, "counted": 5}


def test_rule_26_higher_order_first_then_priority_then_list_position() -> None:
    b = book(
        entry("10", "Gondor", order=50, priority=1),
        entry("9", "Gondor", order=50, priority=1),
        entry("low", "Gondor", order=10),
        entry("p", "Gondor", order=50, priority=5),
        entry("top", "Gondor", order=90),
    )
    # ascending order (every peer's direction) would put "low" first; "10" is listed before
    # "9", and the list decides ties (stored ids are random)
    assert ids(run(b, chat("Gondor"))) == ["top", "p", "10", "9", "low"]


def test_rule_26_ties_across_books_follow_the_books_order_in_the_turn() -> None:
    one = book(entry("10", "Gondor", book_id="one"), book_id="one")
    two = book(entry("9", "Gondor", book_id="two"), book_id="two")
    assert ids(run((one, two), chat("Gondor"))) == ["10", "9"]
    assert ids(run((two, one), chat("Gondor"))) == ["9", "10"]


def test_rule_26_across_books() -> None:
    one = book(entry("x", "Gondor", order=5, book_id="one"), book_id="one")
    two = book(entry("y", "Gondor", order=7, book_id="two"), book_id="two")
    assert ids(run((one, two), chat("Gondor"))) == ["y", "x"]


def test_rule_27_rendered_text_and_added_once() -> None:
    b = book(entry("e", "Gondor", "Rohan", content="@@role user\n@@depth 2\n\n  The realm.  \n"))
    result = run(b, chat("Gondor and Rohan", "Gondor again"))
    assert [a.text for a in result.activations] == ["The realm."]
    assert result.activations[0].role == "user"


def test_empty_content_is_not_rendered() -> None:
    b = book(entry("e", "Gondor", content="@@role user\n   "))
    result = run(b, chat("Gondor"))
    assert ids(result) == []
    assert fate(result, "e").fate == "empty"


def test_trace_has_every_entry_once_in_book_order() -> None:
    b = book(entry("a", "Gondor"), entry("b", "Rohan", enabled=False), entry("c", "Shire"))
    result = run(b, chat("Gondor"))
    assert [t.entry_id for t in result.trace] == ["a", "b", "c"]
    assert [t.fate for t in result.trace] == ["injected", "disabled", "no_match"]


def test_a_book_reached_twice_is_used_once() -> None:
    b = book(entry("a", "Gondor"))
    result = run((b, b), chat("Gondor"))
    assert ids(result) == ["a"] and len(result.trace) == 1
