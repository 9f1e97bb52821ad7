"""classic.md §1 rules 5–11: key matching."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run


def _fires(key: str, text: str, **fields: Any) -> bool:
    return ids(run(book(entry("e", key, **fields)), chat(text))) == ["e"]


def test_rule_05_any_one_primary_key() -> None:
    b = book(entry("e", "Gondor", "Rohan", "Shire"))
    assert ids(run(b, chat("Only the Shire."))) == ["e"]
    assert ids(run(b, chat("Only Mordor."))) == []


def test_rule_05_keys_are_trimmed_and_empty_keys_ignored() -> None:
    assert _fires("  Gondor  ", "to Gondor")
    assert not _fires("   ", "any text at all")
    assert not _fires("", "any text at all")


@pytest.mark.parametrize(
    ("key", "text"),
    [
        ("дракон", "ДРАКОН летит"),  # Cyrillic
        ("σωκράτης", "ΣΩΚΡΆΤΗΣ είπε"),  # Greek, final sigma
        ("Straße", "STRASSE"),  # full case folding
        ("élan", "ÉLAN"),
    ],
)
def test_rule_06_case_insensitive_with_unicode_folding(key: str, text: str) -> None:
    assert _fires(key, text)


def test_rule_06_case_sensitive_entry_and_book() -> None:
    assert not _fires("Dragon", "a dragon", case_sensitive=True)
    assert _fires("Dragon", "a Dragon", case_sensitive=True)
    strict = book(entry("e", "Dragon"), case_sensitive=True)
    assert ids(run(strict, chat("a dragon"))) == []
    loose = book(entry("e", "Dragon", case_sensitive=False), case_sensitive=True)
    assert ids(run(loose, chat("a dragon"))) == ["e"]


def test_rule_07_whole_words_off_is_substring() -> None:
    assert _fires("feu", "la feuille", whole_words=False)
    assert ids(run(book(entry("e", "feu"), whole_words=False), chat("la feuille"))) == ["e"]


@pytest.mark.parametrize(
    ("key", "text", "hit"),
    [
        ("feu", "la feuille tombe", False),
        ("feu", "le feu brûle", True),
        ("Aragorn", "Aragorn's sword", True),
        ("Aragorn", "Aragorn’s sword", True),
        ("Boromir", "Boromir, come", True),
        ("Boromir", "Boromirs", False),
        ("кот", "котёнок спит", False),  # ST's ASCII \W would match here (§6 bug 1)
        ("кот", "мой кот спит", True),
        ("caf", "un café", False),
        ("#hello", "say #hello now", True),  # symbol-edged key, as SillyTavern matches it
        ("#hello", "x#hello", False),  # a letter against the symbol edge
        ("#hello", "##hello", True),  # a symbol against it is a boundary
        ("C++", "I like C++.", True),
        ("C++", "C++x", False),
        ("red moon", "the red moon rises", True),
        ("red moon", "the red moonlight", False),  # multi-word keys checked at both ends (§6 bug 2)
        ("new york", "NEW   YORK", True),  # whitespace runs collapse
        ("under_score", "an under_score here", True),
        ("score", "an under_score here", False),  # _ is a word character
        ("Alice", "Aliceは東京へ", True),  # an unspaced script next to a Latin key is a boundary
    ],
)
def test_rule_08_whole_words_unicode_boundaries(key: str, text: str, hit: bool) -> None:
    assert _fires(key, text) is hit


@pytest.mark.parametrize(
    ("key", "text"),
    [("東京", "東京駅で会おう"), ("앨리스", "앨리스가 왔다"), ("ราชา", "พระราชาเสด็จ")],
)
def test_rule_09_unspaced_scripts_match_as_substrings(key: str, text: str) -> None:
    assert _fires(key, text)


def test_rule_10_regex_keys_use_only_their_own_flags() -> None:
    assert not _fires("/Dragon/", "a dragon")  # case_sensitive off does not apply
    assert _fires("/Dragon/i", "a DRAGON")
    assert _fires("/feu/", "la feuille")  # whole words do not apply
    assert not _fires("/Straße/", "STRASSE")  # tested on the untransformed text
    assert _fires("/drag(on)?s?/", "the dragons")
    assert _fires("/^Hello/", "Hello there")


def test_rule_10_regex_is_tested_per_message() -> None:
    b = book(entry("e", "/^Rohan/"))
    assert ids(run(b, chat("We ride.", "Rohan calls."))) == ["e"]  # anchored at a message start
    b2 = book(entry("e", "/ride\\s+Rohan/"))
    assert ids(run(b2, chat("We ride", "Rohan calls."))) == []  # never across two messages


def test_rule_10_invalid_regex_is_no_match_never_an_error() -> None:
    result = run(book(entry("e", "/(unclosed/")), chat("(unclosed"))
    assert ids(result) == []
    assert "invalid" in fate(result, "e").reason


def test_rule_10_regex_flags() -> None:
    assert _fires("/^second/m", "first\nsecond")
    assert not _fires("/^second/", "first\nsecond")
    assert _fires("/a.b/s", "a\nb")
    assert not _fires("/a.b/", "a\nb")
    assert _fires("/start/y", "start here")
    assert not _fires("/here/y", "start here")  # sticky: only at the start
    assert not _fires("/x/ii", "x")  # a repeated flag is invalid, as in JavaScript


def test_rule_10_regex_in_secondary_keys() -> None:
    b = book(entry("e", "Gondor", secondary_keys=("/steward(s)?/i",)))
    assert ids(run(b, chat("Gondor and its STEWARDS"))) == ["e"]
    assert ids(run(b, chat("Gondor alone"))) == []


def test_rule_10_use_regex_switch() -> None:
    assert _fires("dra+gon", "draaagon", use_regex=True)  # CCv3: every key a regex
    assert not _fires("/x/", "x", use_regex=False)  # every key plain text
    assert _fires("/x/", "a /x/ b", use_regex=False, whole_words=False)


def test_rule_11_keys_in_different_messages_and_never_across_two() -> None:
    b = book(entry("e", "Gondor", secondary_keys=("steward",)))
    assert ids(run(b, chat("Gondor", "the steward"))) == ["e"]
    split = book(entry("e", "Minas Tirith"))
    assert ids(run(split, chat("to Minas", "Tirith we go"))) == []
    assert ids(run(split, chat("to Minas Tirith we go"))) == ["e"]


def test_key_hit_names_the_message() -> None:
    result = run(book(entry("e", "Gondor")), chat("hello", "to Gondor", "ok"))
    hit = result.activations[0].hits[0]
    assert (hit.key, hit.source, hit.message) == ("Gondor", "message", 1)
    assert "message 1" in result.activations[0].reason


def test_rule_08_case_sensitive_whole_words_check_symbol_edges_too() -> None:
    assert not _fires("#Hello", "x#Hello", case_sensitive=True)
    assert _fires("#Hello", "say #Hello", case_sensitive=True)
    assert not _fires("#Hello", "say #hello", case_sensitive=True)


def test_keys_of_several_variants_in_one_book() -> None:
    b = book(
        entry("cs", "Dragon", case_sensitive=True),
        entry("sub", "feu", whole_words=False),
        entry("ww", "feu"),
        entry("rx", "/^x/"),
    )
    assert ids(run(b, chat("x: the Dragon in la feuille"))) == ["cs", "sub", "rx"]  # list order


def test_the_same_key_in_two_entries_and_two_books() -> None:
    one = book(
        entry("a", "Gondor", book_id="one"), entry("b", "gondor", book_id="one"), book_id="one"
    )
    two = book(entry("a", "GONDOR", book_id="two"), book_id="two")
    result = run((one, two), chat("to Gondor"))
    assert [(a.book_id, a.entry_id) for a in result.activations] == [
        ("one", "a"),
        ("one", "b"),  # equal orders: the books' order in the turn, then the list
        ("two", "a"),
    ]
    assert [a.hits[0].key for a in result.activations] == ["Gondor", "gondor", "GONDOR"]
