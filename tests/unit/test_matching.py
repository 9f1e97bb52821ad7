"""The literal matcher (DESIGN §2 rule 5): Unicode-aware verbatim names."""

from __future__ import annotations

import threading

import pytest

from worldbook.core.matching import (
    BookMatcher,
    is_unspaced,
    match_form,
    normalize,
)
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.runtime.matcher_cache import MatcherCache


def _book(*names: str, version: str = "v1", book_id: str = "b") -> LoreBook:
    entries = tuple(
        LoreEntry(f"e{i}", book_id, name, "lore " * 10, 10) for i, name in enumerate(names)
    )
    return LoreBook(book_id, "Book", entries, version=version)


# (alias, text, should match)
TABLE: list[tuple[str, str, bool]] = [
    # Latin: whole words, punctuation and possessives around the name
    ("feu", "la feuille tombe", False),
    ("feu", "le feu brûle", True),
    ("Aragorn", "Aragorn's sword", True),
    ("Aragorn", "Aragorn’s sword", True),  # curly apostrophe
    ("Aragorn", "Hello, Aragorn, hello", True),
    ("Aragorn", "(Aragorn)", True),
    ("Aragorn", "Aragornson", False),
    ("Aragorn", "xAragorn", False),
    ("aragorn", "ARAGORN!", True),
    ("New York", "new   york\ncity", True),  # whitespace runs collapse
    ("Straße", "STRASSE", True),  # casefold ß → ss
    # accents: composed/decomposed are equal; accented vs plain are not
    ("café", "cafe\u0301 noir", True),
    ("cafe\u0301", "un café", True),
    ("résumé", "my resume", False),
    ("Élodie", "ÉLODIE arrived", True),
    # full-width forms
    ("ABC", "ＡＢＣ corp", True),
    ("ＡＢＣ", "abc corp", True),
    ("Ｔｏｋｙｏ", "to tokyo!", True),
    # Cyrillic
    ("Москва", "Я люблю Москва-реку", True),
    ("Москва", "Москвабад", False),
    ("Иван", "иван пришёл", True),
    # Greek (final sigma folds under casefold)
    ("Αθήνα", "στην ΑΘΉΝΑ σήμερα", True),
    ("Οδυσσέας", "ο οδυσσέας ήρθε", True),
    ("Οδυσσέας", "οδυσσέαςxyz", False),
    # Arabic and Hebrew separate words with spaces
    ("القاهرة", "ذهبت إلى القاهرة أمس", True),
    ("قاهرة", "ذهبت إلى القاهرة أمس", False),
    ("ירושלים", "אני בירושלים", False),
    ("ירושלים", "אני גר ירושלים.", True),
    # Devanagari: vowel signs are combining marks, part of the word
    ("दिल्ली", "मैं दिल्ली में हूँ", True),
    ("दिल", "मैं दिल्ली में हूँ", False),
    # CJK, kana: substring
    ("東京", "東京駅で会おう", True),
    ("東京", "私は東京に住む", True),
    ("カタナ", "彼のカタナは鋭い", True),
    ("ひかり", "ひかりが好き", True),
    ("北京", "我在北京工作", True),
    # Hangul: particles attach to names
    ("앨리스", "앨리스가 왔다", True),
    ("서울", "서울에서 만나요", True),
    # Thai, Lao, Khmer, Myanmar: no spaces between words
    ("กรุงเทพ", "ฉันอยู่กรุงเทพมหานคร", True),
    ("ວຽງຈັນ", "ຂ້ອຍຢູ່ວຽງຈັນ", True),
    ("ភ្នំពេញ", "ខ្ញុំនៅភ្នំពេញ", True),
    ("ရန်ကုန်", "ကျွန်တော်ရန်ကုန်မှာနေတယ်", True),
    # Latin name embedded in CJK text (no spaces around it), mixed-script aliases
    ("Alice", "我喜欢Alice的书", True),
    ("東京 Tower", "大東京Towerで", True),
    # punctuation inside aliases is kept, so symbols still discriminate
    ("C++", "I write C++ daily", True),
    ("C++", "I write C daily", False),
    ("Mr. Smith", "then mr. smith left", True),
    ("R2-D2", "beep, R2-D2!", True),
    ("R2-D2", "R2 D2", False),
]


@pytest.mark.parametrize(("alias", "text", "expected"), TABLE)
def test_multilingual_table(alias: str, text: str, expected: bool) -> None:
    matcher = BookMatcher(_book(alias))
    assert bool(matcher.find(text)) is expected


def test_reports_entry_and_alias_as_written() -> None:
    entry = LoreEntry("strider", "b", "Aragorn", "lore " * 10, 10, aliases=("Strider", "Elessar"))
    matcher = BookMatcher(LoreBook("b", "B", (entry,), version="1"))
    [match] = matcher.find("They called him STRIDER, later Elessar.")
    assert (match.entry_id, match.alias, match.position) == ("strider", "Strider", 0)


def test_each_entry_once_in_order_of_first_appearance() -> None:
    matcher = BookMatcher(_book("Gondor", "Rohan"))
    found = matcher.find("Rohan rides to Gondor; Rohan again")
    assert [m.entry_id for m in found] == ["e1", "e0"]


def test_shared_alias_matches_every_owner() -> None:
    a = LoreEntry("a", "b", "Alpha", "lore " * 10, 10, aliases=("the twins",))
    c = LoreEntry("c", "b", "Gamma", "lore " * 10, 10, aliases=("The Twins",))
    found = BookMatcher(LoreBook("b", "B", (a, c), version="1")).find("the twins came")
    assert [m.entry_id for m in found] == ["a", "c"]


def test_disabled_entries_never_match() -> None:
    entry = LoreEntry("x", "b", "Mordor", "lore " * 10, 10, enabled=False)
    assert BookMatcher(LoreBook("b", "B", (entry,), version="1")).find("Mordor") == []


def test_overlapping_names_all_found() -> None:
    matcher = BookMatcher(_book("Minas Tirith", "Tirith"))
    assert {m.entry_id for m in matcher.find("at Minas Tirith")} == {"e0", "e1"}


def test_empty_aliases_are_ignored() -> None:
    entry = LoreEntry("x", "b", "Shire", "lore " * 10, 10, aliases=("", "   "))
    matcher = BookMatcher(LoreBook("b", "B", (entry,), version="1"))
    assert matcher.find("anything at all") == []
    assert matcher.find("") == []


def test_normalize() -> None:
    assert normalize("  ＡＢＣ\u00a0 Déjà\n\tvu ") == "abc déjà vu"
    assert normalize("e\u0301") == "é"
    assert normalize("it’s") == "it's"


def test_match_form_spaces_every_boundary() -> None:
    assert match_form("Aragorn's sword,") == " aragorn ' s sword , "
    assert match_form("我喜欢Alice的书") == " 我喜欢 alice 的书 "
    assert match_form("मैं दिल्ली") == " मैं दिल्ली "  # vowel signs stay inside words


def test_is_unspaced() -> None:
    assert all(is_unspaced(c) for c in "東ひカ한ไລខမ")
    assert not any(is_unspaced(c) for c in "aЖλعאद")


def test_cache_builds_once_per_version_and_is_bounded() -> None:
    cache = MatcherCache(max_books=2)
    book = _book("Gondor")
    first = cache.get(book)
    assert cache.get(book) is first
    assert cache.builds == 1
    newer = _book("Gondor", "Rohan", version="v2")
    assert cache.get(newer) is not first
    assert len(cache) == 1  # the stale version of the same book is dropped
    cache.get(_book("X", book_id="c"))
    cache.get(_book("Y", book_id="d"))
    assert len(cache) == 2
    assert cache.builds == 4


def test_cache_never_keeps_unversioned_books() -> None:
    cache = MatcherCache()
    book = _book("Gondor", version="")
    assert cache.get(book) is not cache.get(book)
    assert len(cache) == 0


def test_cache_is_thread_safe() -> None:
    cache = MatcherCache(max_books=3)
    books = [_book("Gondor", book_id=f"b{i}") for i in range(6)]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                for book in books:
                    assert cache.get(book).find("Gondor")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) <= 3


def test_large_book_builds_and_matches() -> None:
    entries = tuple(
        LoreEntry(
            f"e{i}",
            "b",
            f"Place {i}",
            "lore " * 10,
            10,
            aliases=tuple(f"alias{i}x{j}" for j in range(50)),
        )
        for i in range(2000)
    )
    matcher = BookMatcher(LoreBook("b", "B", entries, version="1"))
    found = matcher.find("We met at alias1999x49 near Place 7 and alias12x0.")
    assert [m.entry_id for m in found] == ["e1999", "e7", "e12"]


def test_derived_values_are_remembered_per_book_version() -> None:
    cache = MatcherCache(max_derived=2)
    calls: list[str] = []

    def compute() -> str:
        calls.append("x")
        return "value"

    v1, v2 = _book("A"), _book("A", version="v2")
    assert cache.derived(v1, ("k",), compute) == cache.derived(v1, ("k",), compute) == "value"
    assert len(calls) == 1
    cache.derived(v2, ("k",), compute)
    assert len(calls) == 2  # a new version recomputes
    unversioned = _book("A", version="")
    cache.derived(unversioned, ("k",), compute)
    cache.derived(unversioned, ("k",), compute)
    assert len(calls) == 4  # never remembered without a version


# --- no turn pays for an edit (ADR 0008) ---------------------------------------------

from dataclasses import replace as _replace  # noqa: E402

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from worldbook.core.matching import OverlayMatcher  # noqa: E402

_OV_NAMES = ["Ashford", "Bell City", "東京", "Mira", "Kovač", "Old Fenn", "Young Fenn", "Zaryansk"]


def _ov_entry(i: int, title: str, aliases: tuple[str, ...] = (), enabled: bool = True) -> LoreEntry:
    return LoreEntry(f"e{i}", "b", title, "Some lore about it.", 4, aliases, enabled=enabled)


def _ov_book(entries: list[LoreEntry], version: str) -> LoreBook:
    return LoreBook("b", "Book", tuple(entries), version=version)


_edit = st.tuples(
    st.sampled_from(["rename", "alias", "disable", "enable", "delete", "add", "move"]),
    st.integers(0, 50),
    st.sampled_from(_OV_NAMES),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_edit, min_size=1, max_size=6), st.lists(st.sampled_from(_OV_NAMES), max_size=6))
def test_an_overlay_finds_exactly_what_a_rebuild_finds(
    edits: list[tuple[str, int, str]], words: list[str]
) -> None:
    entries = [_ov_entry(i, name, (f"{name} Hall",)) for i, name in enumerate(_OV_NAMES)]
    before = _ov_book(entries, "1")
    base = BookMatcher(before)
    after = list(entries)
    for kind, n, name in edits:
        i = n % len(after) if after else 0
        if kind == "add" or not after:
            after.append(_ov_entry(100 + n, name))
        elif kind == "rename":
            after[i] = _replace(after[i], title=name)
        elif kind == "alias":
            after[i] = _replace(after[i], aliases=(name,))
        elif kind in ("disable", "enable"):
            after[i] = _replace(after[i], enabled=kind == "enable")
        elif kind == "delete":
            after.pop(i)
        else:  # move
            after.insert(0, after.pop(i))
    new = _ov_book(after, "2")
    changed = {e.id for e in after if base.names.get(e.id) != (e.enabled, e.title, e.aliases)}
    changed |= base.names.keys() - {e.id for e in after}
    overlay = OverlayMatcher(base, new, changed)
    text = " and ".join(words) + " in 東京駅 near Bell City Hall."
    assert overlay.find(text) == BookMatcher(new).find(text)


def test_a_new_version_is_answered_by_an_overlay_then_by_the_full_matcher() -> None:
    cache = MatcherCache(background=True)
    entries = [_ov_entry(i, f"Place {i}") for i in range(200)]
    cache.get(_ov_book(entries, "1"))
    assert cache.builds == 1
    edited = list(entries)
    edited[7] = _replace(edited[7], title="Saltreach")
    first = cache.get(_ov_book(edited, "2"))
    assert isinstance(first, OverlayMatcher) and cache.overlays == 1
    assert [m.entry_id for m in first.find("to Saltreach, not Place 7")] == ["e7"]
    assert cache.wait_idle(10)
    assert isinstance(cache.get(_ov_book(edited, "2")), BookMatcher) and cache.builds == 2


def test_without_background_builds_are_synchronous() -> None:
    cache = MatcherCache()
    entries = [_ov_entry(i, f"Place {i}") for i in range(5)]
    cache.get(_ov_book(entries, "1"))
    assert isinstance(cache.get(_ov_book(entries, "2")), BookMatcher) and cache.overlays == 0


_SHARD_NAMES = [*_OV_NAMES, "Bell", "City Hall", "Fenn", "Old", "Hall", "京"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_SHARD_NAMES), st.lists(st.sampled_from(_SHARD_NAMES))),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.sampled_from(_SHARD_NAMES), max_size=8),
    st.integers(1, 4),
)
def test_a_sharded_matcher_finds_exactly_what_one_automaton_finds(
    names: list[tuple[str, list[str]]], words: list[str], shard: int
) -> None:
    """Automata split in shards (a bounded GIL stall per ``make_automaton``) report the same
    matches, aliases and order as one automaton over every pattern."""
    from worldbook.core import matching

    book = _ov_book([_ov_entry(i, t, tuple(a)) for i, (t, a) in enumerate(names)], "1")
    text = " ".join(words) + " near Old Fenn and Bell City Hall, 東京駅."
    whole = BookMatcher(book)
    saved = matching.SHARD_PATTERNS
    matching.SHARD_PATTERNS = shard
    try:
        sharded = BookMatcher(book)
    finally:
        matching.SHARD_PATTERNS = saved
    assert sharded.find(text) == whole.find(text)


def test_a_background_build_steps_aside_while_a_turn_is_served() -> None:
    import time

    from worldbook.runtime.background import Foreground

    gauge = Foreground(max_wait_s=10)
    cache = MatcherCache(background=True, foreground=gauge)
    entries = [_ov_entry(i, f"Place {i}", (f"Alias {i}",)) for i in range(200)]
    cache.get(_ov_book(entries, "1"))  # the first version is built at once
    entries[7] = _replace(entries[7], title="Saltreach")
    with gauge.serving():
        overlay = cache.get(_ov_book(entries, "2"))
        assert isinstance(overlay, OverlayMatcher)
        time.sleep(0.3)  # past the delay: the build started and is waiting for the turn
        assert cache.builds == 1
    assert cache.wait_idle(10)
    assert cache.builds == 2
    assert isinstance(cache.get(_ov_book(entries, "2")), BookMatcher)
