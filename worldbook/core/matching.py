"""The literal matcher: which entries are named verbatim in a text (DESIGN §2 rule 5).

Titles and aliases are normalised (NFKC + casefold, curly apostrophes folded, whitespace runs
collapsed) and loaded into one Aho–Corasick automaton per book version, so a turn costs one pass
over each message whatever the number of aliases — unlike a regex per key per turn.

Word boundaries depend on the script (DESIGN §2 rule 5, issue 3 item 2): an alias edge in a
script that separates words with spaces (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, …)
must meet a word boundary, so ``feu`` does not match ``feuille`` while ``Aragorn's`` and
``Aragorn,`` match ``Aragorn``. Scripts written without spaces (Han, Hiragana, Katakana,
Hangul, Thai, Lao, Khmer, Myanmar) match as substrings: ``東京`` in ``東京駅で``, ``앨리스`` in
``앨리스가``.

How: texts and aliases are put in a *match form* where every boundary is one space — a space is
inserted wherever the character class changes between word characters of spaced scripts (W),
characters of unspaced scripts (U) and punctuation/symbols (P) — and the text is padded with a
space at both ends. An alias gets a leading/trailing space unless that edge is U. Then a plain
substring hit *is* a correct hit: ``" feu "`` is not in ``" la feuille "``, ``" aragorn "`` is
in ``" aragorn ' s sword "``, ``"東京"`` is in ``" 東京駅で "``. The automaton never reports
the raw in-word hits a boundary check would have to reject, which keeps dense books fast.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar, cast

import ahocorasick

from worldbook.core.lru import LRU
from worldbook.core.types import LoreBook

T = TypeVar("T")

# Unicode blocks of scripts that do not put spaces between words. Python's unicodedata has no
# script property, so the blocks are listed (Unicode 15 block table).
_UNSPACED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer Symbols
    (0x2E80, 0x2FDF),  # CJK Radicals, Kangxi Radicals
    (0x3000, 0x303F),  # CJK Symbols and Punctuation (々, 〆 are parts of words)
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul Compatibility Jamo
    (0x31A0, 0x31FF),  # Bopomofo Extended, CJK Strokes, Katakana Phonetic Extensions
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xA960, 0xA97F),  # Hangul Jamo Extended-A
    (0xA9E0, 0xA9FF),  # Myanmar Extended-B
    (0xAA60, 0xAA7F),  # Myanmar Extended-A
    (0xAC00, 0xD7FF),  # Hangul Syllables, Jamo Extended-B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF65, 0xFFDC),  # Halfwidth Katakana / Hangul (NFKC widens most of them)
    (0x1B000, 0x1B16F),  # Kana Supplement / Extended
    (0x20000, 0x3FFFF),  # CJK Extensions B–H, Compatibility Supplement
)

_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'"})
_SPACES = re.compile(r"\s+")


def is_unspaced(char: str) -> bool:
    """Whether ``char`` belongs to a script written without spaces between words."""
    code = ord(char)
    if code < 0x0E00:
        return False
    return any(lo <= code <= hi for lo, hi in _UNSPACED_RANGES)


def _is_word_char(char: str) -> bool:
    # Combining marks (Devanagari vowel signs, Arabic harakat) are inside words, not between.
    return char.isalnum() or char == "_" or unicodedata.category(char)[0] == "M"


class _CharClasses(dict[int, str]):
    """``str.translate`` table: code point → " " (space), "U", "W" or "P", filled lazily."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char.isspace():
            cls = " "
        elif is_unspaced(char):
            cls = "U"
        elif _is_word_char(char):
            cls = "W"
        else:
            cls = "P"
        self[code] = cls
        return cls


_CLASSES = _CharClasses()
_CLASS_CHANGE = re.compile(r"(?<=W)(?=[UP])|(?<=U)(?=[WP])|(?<=P)(?=[WU])")


def _split_classes(norm: str) -> str:
    """Insert one space wherever the W/U/P class changes (``norm`` is already normalised)."""
    cuts = [m.start() for m in _CLASS_CHANGE.finditer(norm.translate(_CLASSES))]
    if not cuts:
        return norm
    starts = [0, *cuts]
    ends = [*cuts, len(norm)]
    return " ".join(norm[a:b] for a, b in zip(starts, ends, strict=True))


def match_form(text: str) -> str:
    """A text as the matcher scans it: normalised, boundaries spaced, padded with spaces."""
    return f" {_split_classes(normalize(text))} "


def spaced_form(norm: str) -> str:
    """An already normalised text with class boundaries spaced and padded (the classic engine
    builds it from :func:`normalize` or :func:`normalize_keep_case`)."""
    return f" {_split_classes(norm)} "


def char_class(char: str) -> str:
    """``"W"`` word character of a spaced script, ``"U"`` character of an unspaced script,
    ``"P"`` punctuation or symbol, ``" "`` whitespace."""
    return _CLASSES[ord(char)]


@lru_cache(maxsize=1 << 17)
def _alias_form(alias: str) -> str:
    """An alias as loaded in the automaton: edges in unspaced scripts are left open.

    Memoised (bounded): after an edit, the next turn rebuilds the book's automaton, and
    nearly all of its aliases are the same strings as before — normalising them again was
    more than half of the rebuild time (1.2 of 2.0 s for 102,000 aliases).
    """
    core = _split_classes(normalize(alias))
    if not core:
        return ""
    left = "" if _CLASSES[ord(core[0])] == "U" else " "
    right = "" if _CLASSES[ord(core[-1])] == "U" else " "
    return f"{left}{core}{right}"


def normalize(text: str) -> str:
    """NFKC + casefold, apostrophes folded, whitespace runs collapsed to one space.

    NFKC composes ``e`` + combining acute into ``é`` and widens/narrows full-width forms
    (``ＡＢＣ`` → ``abc``). Accents are kept: ``resume`` does not match ``résumé``
    (see docs/decisions.md).
    """
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)
    # casefold can produce decomposed sequences (e.g. "İ" → "i̇"); recompose once more.
    folded = unicodedata.normalize("NFC", folded)
    return _SPACES.sub(" ", folded).strip()


def normalize_keep_case(text: str) -> str:
    """:func:`normalize` without case folding (case-sensitive classic keys)."""
    kept = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES)
    return _SPACES.sub(" ", kept).strip()


@dataclass(frozen=True, slots=True)
class Match:
    """One entry named in one text: which entry, through which title or alias."""

    entry_id: str
    alias: str
    position: int  # the entry's index in ``LoreBook.entries``


class BookMatcher:
    """One Aho–Corasick automaton over the titles and aliases of one book version's enabled
    entries. Immutable once built; safe to share between threads."""

    __slots__ = ("_automaton", "_empty", "book_id", "positions", "version")

    def __init__(self, book: LoreBook) -> None:
        self.book_id = book.id
        self.version = book.version
        # Entry id -> list index, so the selection finds an entry without scanning the book.
        self.positions: dict[str, int] = {e.id: i for i, e in enumerate(book.entries)}
        automaton = ahocorasick.Automaton()
        # normalised pattern -> [(entry_id, alias as written, position)], entries in list order
        owners: dict[str, list[tuple[str, str, int]]] = {}
        for position, entry in enumerate(book.entries):
            if not entry.enabled:
                continue
            seen: set[str] = set()
            for alias in (entry.title, *entry.aliases):
                key = _alias_form(alias)
                if not key or key in seen:
                    continue
                seen.add(key)
                owners.setdefault(key, []).append((entry.id, alias, position))
        for key, entries in owners.items():
            automaton.add_word(key, tuple(entries))
        self._empty = not owners
        if owners:
            automaton.make_automaton()
        self._automaton = automaton

    def find(self, text: str, *, prepared: bool = False) -> list[Match]:
        """Entries named in ``text``, each once, in order of first appearance.

        Pass ``prepared=True`` when ``text`` is already a :func:`match_form` (the selection
        prepares each message once for all books).
        """
        if self._empty or not text:
            return []
        scanned = text if prepared else match_form(text)
        found: dict[str, Match] = {}
        for _end, entries in self._automaton.iter(scanned):
            for entry_id, alias, position in entries:
                if entry_id not in found:
                    found[entry_id] = Match(entry_id, alias, position)
        return list(found.values())


class MatcherCache:
    """A bounded LRU of :class:`BookMatcher` keyed by ``(book_id, version)``, plus a bounded
    memo of other text derived from one book version (entry cuts and index lines).

    The service keeps one for the process and passes it to every ``select`` call. A book with
    an empty ``version`` is never cached (nothing says when it changed), so it is rebuilt on
    every call — the service must set ``LoreBook.version``.
    """

    def __init__(self, max_books: int = 256, max_derived: int = 20_000) -> None:
        self._items: LRU[tuple[str, str], BookMatcher] = LRU(max(1, max_books))
        self._derived: LRU[tuple[str, ...], object] = LRU(max(1, max_derived))
        self._lock = threading.Lock()
        self.builds = 0  # how many automata were built (tests assert caching with it)

    def derived(self, book: LoreBook, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``(book.id, book.version, *key)``.

        ``key`` must name everything else the value depends on (entry id, tokenizer id, caps).
        """
        if not book.version:
            return compute()
        return cast(T, self._derived.get_or_compute((book.id, book.version, *key), compute))

    def __len__(self) -> int:
        return len(self._items)

    def get(self, book: LoreBook) -> BookMatcher:
        """The matcher of ``book`` at its current version, built on first use."""
        if not book.version:
            self._count_build()
            return BookMatcher(book)
        key = (book.id, book.version)
        matcher = self._items.get(key)
        if matcher is not None:
            return matcher
        # Built outside any lock: a 100k-alias automaton takes a while and other books'
        # turns should not wait. Two threads may build the same one; the last one wins.
        matcher = BookMatcher(book)
        self._count_build()
        self._items.put(key, matcher)
        # An older version of the same book will never be asked for again.
        self._items.discard_where(lambda k: k[0] == book.id and k != key)
        return matcher

    def _count_build(self) -> None:
        with self._lock:
            self.builds += 1
