"""The optional morphology tier of the literal matcher (ADR 0013): a declined or
conjugated form of a name ("в Зарянске" for the entry "Зарянск", "des Schwarzen Bundes" for
"Der Schwarze Bund") matches when the Snowball stems of its words equal those of a title or
alias, word for word. Off unless ``SelectionRules.literal_stem_languages`` names stemmers.

Whole words only, as the exact tier: the stems of ``feu`` and ``feuille`` differ (``feu`` /
``feuill``), so ``feu`` still does not match ``feuille``. Aliases in scripts written without
spaces are left to the exact tier (it matches them as substrings already), and a name whose
stems are shorter than ``MIN_STEM_CHARS`` in all is never stem-matched (short stems collide).
Snowball stemmers (snowballstemmer, pure Python; Porter 2001) are rules, nothing learned.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from worldbook.core.matching import is_unspaced, match_form
from worldbook.core.types import LoreBook

MIN_STEM_CHARS = 4


@lru_cache(maxsize=64)
def _stemmer(language: str) -> Any:
    import snowballstemmer  # only when the tier is on

    return snowballstemmer.stemmer(language)


def stems(words: list[str], language: str) -> tuple[str, ...]:
    return tuple(_stemmer(language).stemWords(words))


def words_of(text: str) -> list[str]:
    """The words of ``text`` in match form (casefolded, NFKC), spaced scripts only."""
    return [
        w for w in match_form(text).split() if w.isalpha() and not any(is_unspaced(c) for c in w)
    ]


@dataclass(frozen=True, slots=True)
class StemHit:
    position: int  # the entry's list position
    entry_id: str
    alias: str  # the title or alias matched
    form: str  # the words of the text that matched it


@dataclass(frozen=True, slots=True)
class StemIndex:
    """A book's titles and aliases by the stems of their words, for one stemmer."""

    language: str
    names: dict[tuple[str, ...], tuple[tuple[int, str, str], ...]]
    longest: int

    def find(self, text: str) -> list[StemHit]:
        """Names whose stems occur in ``text`` as consecutive words (first occurrence order)."""
        words = words_of(text)
        if not words or not self.names:
            return []
        stemmed = stems(words, self.language)
        found: list[StemHit] = []
        for start in range(len(stemmed)):
            for size in range(1, min(self.longest, len(stemmed) - start) + 1):
                for position, entry_id, alias in self.names.get(stemmed[start : start + size], ()):
                    form = " ".join(words[start : start + size])
                    found.append(StemHit(position, entry_id, alias, form))
        return found


def stem_index(book: LoreBook, language: str) -> StemIndex:
    """The stem index of the book's enabled when-relevant entries (cache it per book version)."""
    names: dict[tuple[str, ...], list[tuple[int, str, str]]] = {}
    for position, entry in enumerate(book.entries):
        if not entry.enabled or entry.canon:
            continue
        for alias in dict.fromkeys((entry.title, *entry.aliases)):
            words = words_of(alias)
            if not words or len(words) != len(match_form(alias).split()):
                continue  # a name with digits, symbols or unspaced script: exact tier only
            key = stems(words, language)
            if sum(len(s) for s in key) >= MIN_STEM_CHARS:
                names.setdefault(key, []).append((position, entry.id, alias))
    longest = max((len(k) for k in names), default=0)
    return StemIndex(language, {k: tuple(v) for k, v in names.items()}, longest)
