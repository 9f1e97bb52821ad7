"""The optional inflected-name tier of the literal matcher (ADR 0013)."""

from __future__ import annotations

from dataclasses import replace

from tests.lore_builders import TOKENIZER, book, entry, large_book, turn
from worldbook.core.selection import select
from worldbook.core.stemming import stem_index, words_of
from worldbook.core.types import Decision, LoreBook, Selection, SelectionRules, Turn, Via
from worldbook.runtime.matcher_cache import MatcherCache

RULES = SelectionRules()
RUSSIAN = replace(RULES, literal_stem_languages=("russian",))


def run(t: Turn, rules: SelectionRules) -> Selection:
    return select(t, rules, TOKENIZER, matcher_cache=MatcherCache())


def _book() -> LoreBook:
    city = entry("city", "Зарянск", tokens=40)
    fire = entry("feu", "Feu", tokens=40)
    orm = entry("orm", "Orm", tokens=40)
    return book("big", [city, fire, orm, *large_book(n=300, tokens=40).entries])


def test_a_declined_name_matches_only_with_the_tier_on() -> None:
    big = _book()
    t = turn(big, user="Что делают купцы в Зарянске зимой?", window=100000)
    assert "city" not in [e.ref.entry_id for e in run(t, RULES).injected]
    sel = run(t, RUSSIAN)
    [hit] = [e for e in sel.injected if e.ref.entry_id == "city"]
    assert hit.via is Via.LITERAL
    [rec] = [r for r in sel.trace if r.entry_id == "city"]
    assert rec.decision is Decision.INJECTED
    assert "named as 'Зарянск' (inflected: 'зарянске') in the last user message" in rec.reason


def test_whole_words_still_feu_does_not_match_feuille() -> None:
    big = _book()
    french = replace(RULES, literal_stem_languages=("french",))
    t = turn(big, user="Une feuille tombe.", window=100000)
    assert "feu" not in [e.ref.entry_id for e in run(t, french).injected]
    t = turn(big, user="Les feux du port.", window=100000)
    assert "feu" not in [e.ref.entry_id for e in run(t, french).injected]  # feux -> "feux"


def test_short_names_are_left_to_the_exact_tier() -> None:
    big = _book()
    index = stem_index(big, "english")
    assert ("orm",) not in index.names  # 3 characters: collides too easily
    assert index.find("the orms of the coast") == []


def test_multi_word_names_match_word_for_word() -> None:
    league = entry("bund", "Schwarzer Bund", tokens=40)
    big = book("big", [league, *large_book(n=300, tokens=40).entries])
    index = stem_index(big, "german")
    [hit] = index.find("Die Schiffe des Schwarzen Bundes liegen im Hafen.")
    assert (hit.entry_id, hit.alias, hit.form) == ("bund", "Schwarzer Bund", "schwarzen bundes")
    assert index.find("Der schwarze Hund bellt.") == []


def test_words_of_keeps_spaced_script_words_only() -> None:
    assert words_of("Aragorn's 東京駅 sword, 42 times") == ["aragorn", "s", "sword", "times"]
