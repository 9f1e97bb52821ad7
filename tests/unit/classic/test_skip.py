"""``ClassicTurn.skip``: entries already in the prompt by another path (a hybrid book's entry
the world selection sent in full) are neither activated nor charged to the budget."""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run

WORDS5 = "one two three four five"  # 5 tokens under the word tokenizer


def test_skipped_entries_are_not_activated_nor_charged() -> None:
    b = book(
        entry("a", "Gondor", content=WORDS5, priority=9),
        entry("b", "Gondor", content=WORDS5, priority=1),
        token_budget=5,
    )
    assert ids(run(b, chat("Gondor"))) == ["a"]  # b does not fit behind a
    result = run(b, chat("Gondor"), skip=frozenset({("b", "a")}))
    assert ids(result) == ["b"]  # a is not charged: b fits
    assert fate(result, "a").fate == "elsewhere"
    assert result.used == 5


def test_the_character_label_is_this_turns_not_the_cached_books() -> None:
    from dataclasses import replace

    from worldbook.core.classic import ClassicTurn, select_classic
    from worldbook.runtime.classic_cache import ClassicMatcherCache
    from worldbook.testing import WordTokenizer

    b = book(entry("a", "Gondor"))
    cache = ClassicMatcherCache()
    for name in ("Ann", "Bo"):
        turn = ClassicTurn((replace(b, character=name),), chat("Gondor"), WordTokenizer().count)
        assert select_classic(turn, None, cache).activations[0].character == name
