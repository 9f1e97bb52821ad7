"""Entry titles and aliases made from text: cleaned, shortened, derived, and made unique.

Used by the splitter (titles from headings or opening words) and by generate (the book title).
Titles are at most the entry-title limit (DESIGN §6) and cut at a word boundary with "…";
uniqueness is judged on the selection's Unicode-aware ``normalize`` (NFKC + casefold).
"""

from __future__ import annotations

from collections.abc import Sequence

from worldbook.core.limits import LIMITS, Limits, weighted_length
from worldbook.core.matching import normalize

SENTENCE_END = ".!?…。！？"
TITLE_CHARS = " \t#*_`>:-–—•"
DERIVED_TITLE_MAX = 60


def shorten(text: str, limit: int, *, trailing: str | None = " ,;:") -> str:
    """Cut to ``limit`` characters at a word boundary when one is near, ending with '…'.

    ``trailing``: what is stripped from the cut before the '…' (titles drop a dangling comma
    or colon too; None strips whitespace only)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(trailing) + "…"


def clean_title(raw: str | None, limits: Limits = LIMITS) -> str | None:
    """A usable entry title from ``raw`` (markup trimmed, at most the title limit), or None."""
    if raw is None:
        return None
    title = shorten(" ".join(raw.split()).strip(TITLE_CHARS), limits.entry_title_max)
    return title if weighted_length(title) >= limits.entry_title_min else None


def opening_title(lore: str, limits: Limits = LIMITS) -> str | None:
    """A title from the lore's first line: its first sentence, at most 60 characters."""
    line = next((ln for ln in lore.splitlines() if ln.strip()), "")
    words = " ".join(line.split()).strip(TITLE_CHARS)
    for mark in SENTENCE_END:
        at = words.find(mark)
        if 0 < at < len(words) - 1:
            words = words[: at + (1 if mark in "。！？" else 0)]
    return clean_title(shorten(words, DERIVED_TITLE_MAX), limits)


def unique_titles(titles: list[str], limits: Limits) -> list[str]:
    """Later repeats of a title (Unicode-folded) get `` (2)``, `` (3)``…"""
    seen: set[str] = set()
    out = []
    for title in titles:
        candidate, n = title, 1
        while normalize(candidate) in seen:
            n += 1
            suffix = f" ({n})"
            candidate = shorten(title, limits.entry_title_max - len(suffix)) + suffix
        seen.add(normalize(candidate))
        out.append(candidate)
    return out


def unique_aliases(aliases: Sequence[str], title: str, limits: Limits) -> tuple[str, ...]:
    seen = {normalize(title)}
    kept = []
    for alias in aliases:
        alias = " ".join(alias.split())
        key = normalize(alias)
        if alias and key not in seen and len(alias) <= limits.alias_max:
            seen.add(key)
            kept.append(alias)
    return tuple(kept[: limits.aliases_max])
