"""Text forms of the literal matchers (world and classic): Unicode normalisation and the
*match form* in which every word boundary is one space (see :mod:`worldbook.core.matching`)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

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
def alias_form(alias: str) -> str:
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
