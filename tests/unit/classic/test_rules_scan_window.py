"""classic.md §1 "Input" and rules 1–4: what the scan window holds."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.types import Message


def test_input_scans_content_of_both_roles_not_names_or_system() -> None:
    b = book(entry("a", "Alice"), entry("r", "Rohan"), entry("s", "Shire"), scan_depth=10)
    messages = [
        Message("system", "The Shire is green."),  # system messages are not chat (ST chatForWI)
        Message("user", "Where now?", "Alice"),  # the speaker's name is not scanned
        Message("assistant", "To Rohan.", "Bob"),  # the character's replies count
    ]
    result = run(b, messages)
    assert ids(result) == ["r"]
    assert fate(result, "a").fate == "no_match"
    assert fate(result, "s").fate == "no_match"


def test_rule_01_scan_depth_is_the_last_n_messages() -> None:
    b = book(entry("old", "Gondor"), entry("new", "Rohan"), scan_depth=1)
    # A window taken from the wrong end (the first message) would fire "old", not "new".
    result = run(b, chat("Gondor first.", "then nothing", "Rohan last."))
    assert ids(result) == ["new"]


def test_rule_01_depth_counts_messages_from_the_newest() -> None:
    b2 = book(entry("g", "Gondor"), scan_depth=2)
    b3 = book(entry("g", "Gondor"), scan_depth=3)
    messages = chat("Gondor here.", "nothing", "nothing again")
    assert ids(run(b2, messages)) == []
    assert ids(run(b3, messages)) == ["g"]


def test_rule_02_depth_beyond_the_chat_is_the_whole_chat() -> None:
    b = book(entry("g", "Gondor"), scan_depth=100)
    assert ids(run(b, chat("Gondor in the first message.", "later", "later still"))) == ["g"]


def test_rule_03_depth_zero_scans_no_message_but_recursed_content() -> None:
    on = book(
        entry("c", content="Minas Tirith stands.", constant=True),
        entry("m", "Minas Tirith"),
        entry("r", "Rohan"),
        scan_depth=0,
        recursive_scanning=True,
    )
    result = run(on, chat("Rohan! Minas Tirith!"))
    assert ids(result) == ["c", "m"]  # "r" is only in the chat
    assert result.activations[1].via == "recursion"
    assert "scan depth 0" in fate(result, "r").reason
    off = book(*on.entries, scan_depth=0, recursive_scanning=False)
    assert ids(run(off, chat("Rohan! Minas Tirith!"))) == ["c"]


def test_rule_04_scan_depth_decorator_replaces_the_book_depth() -> None:
    b = book(
        entry("wide", "Gondor", decorators=("@@scan_depth 4",)),
        entry("narrow", "Rohan", decorators=("@@scan_depth 1",)),
        entry("zero", "Shire", decorators=("@@scan_depth 0",)),
        entry("plain", "Gondor"),
        scan_depth=2,
    )
    result = run(b, chat("Gondor", "x", "Rohan", "Shire"))
    assert ids(result) == ["wide"]  # "plain" looks 2 back: no Gondor; "narrow" 1 back: no Rohan
    assert fate(result, "zero").fate == "no_match"


def test_rule_04_entry_scan_depth_field_and_decorator_precedence() -> None:
    b = book(
        entry("field", "Gondor", scan_depth=3),
        entry("both", "Gondor", scan_depth=3, decorators=("@@scan_depth 1",)),
        scan_depth=1,
    )
    assert ids(run(b, chat("Gondor", "x", "y"))) == ["field"]
