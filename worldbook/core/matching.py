"""The literal matcher: which entries are named verbatim in a text (DESIGN §2 rule 5).

Titles and aliases are normalised (NFKC + casefold, curly apostrophes folded, whitespace runs
collapsed) and loaded into one Aho–Corasick automaton per book version, so a turn costs one pass
over each message whatever the number of aliases — unlike a regex per key per turn.

Word boundaries depend on the script (DESIGN §2 rule 5): an alias edge in a
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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

import ahocorasick

from worldbook.core.text_forms import (
    alias_form,
    char_class,
    is_unspaced,
    match_form,
    normalize,
    normalize_keep_case,
    spaced_form,
)
from worldbook.core.types import LoreBook

__all__ = [
    "BookMatcher",
    "Match",
    "Matchers",
    "TurnMatchers",
    "char_class",
    "is_unspaced",
    "match_form",
    "normalize",
    "normalize_keep_case",
    "spaced_form",
]

T = TypeVar("T")


def _no_pause() -> None:
    """A build that runs for a turn never steps aside."""


@dataclass(frozen=True, slots=True)
class Match:
    """One entry named in one text: which entry, through which title or alias."""

    entry_id: str
    alias: str
    position: int  # the entry's index in ``LoreBook.entries``


Names = tuple[bool, str, tuple[str, ...]]
"""What an entry contributes to a matcher: (enabled, title, aliases)."""

# (end offset of the first hit in the scanned text, match); what matchers merge on.
_Hit = tuple[int, Match]


def _names(book: LoreBook) -> dict[str, Names]:
    return {e.id: (e.enabled, e.title, e.aliases) for e in book.entries}


_Owner = tuple[str, str, int, int]
"""Who a pattern names: (entry id, alias as written, list position, minus the pattern's
length — the order among hits that end at one offset)."""

SHARD_PATTERNS = 8192
"""Patterns per automaton. ``make_automaton`` is one C call that holds the GIL: on a
100,000-alias book, one automaton would stall every other thread (the turns a background
rebuild runs beside) for ≈160 ms; shards of 8,192 bound a stall to ≈15 ms for ~12 scans of a
message instead of one (microseconds each)."""


def _shards(owners: dict[str, list[_Owner]]) -> list[list[tuple[str, list[_Owner]]]]:
    items = list(owners.items())
    return [items[i : i + SHARD_PATTERNS] for i in range(0, len(items), SHARD_PATTERNS)] or [[]]


def _automaton(
    patterns: list[tuple[str, list[_Owner]]], pause: Callable[[], None]
) -> ahocorasick.Automaton:
    automaton = ahocorasick.Automaton()
    for i, (key, entries) in enumerate(patterns):
        if i % 1024 == 1023:
            pause()
        automaton.add_word(key, tuple(entries))
    if patterns:
        pause()  # make_automaton holds the GIL for the whole shard
        automaton.make_automaton()
    return automaton


class BookMatcher:
    """One Aho–Corasick automaton over the titles and aliases of one book version's enabled
    entries (or of a chosen subset of them). Immutable once built; safe to share between
    threads."""

    __slots__ = ("_automata", "_empty", "book_id", "names", "positions", "version")

    def __init__(
        self, book: LoreBook, only: set[str] | None = None, *, pause: Callable[[], None] = _no_pause
    ) -> None:
        self.book_id = book.id
        self.version = book.version
        # Entry id -> list index, so the selection finds an entry without scanning the book.
        self.positions: dict[str, int] = {e.id: i for i, e in enumerate(book.entries)}
        # What each entry contributed: the next version's overlay is built from the difference.
        self.names: dict[str, Names] = _names(book)
        # normalised pattern -> its owners, entries in list order
        owners: dict[str, list[_Owner]] = {}
        for position, entry in enumerate(book.entries):
            if position % 64 == 63:
                pause()  # a background build steps aside for the turns (runtime/background.py)
            if not entry.enabled or (only is not None and entry.id not in only):
                continue
            seen: set[str] = set()
            for alias in (entry.title, *entry.aliases):
                key = alias_form(alias)
                if not key or key in seen:
                    continue
                seen.add(key)
                owners.setdefault(key, []).append((entry.id, alias, position, -len(key)))
        self._automata = [_automaton(shard, pause) for shard in _shards(owners)]
        self._empty = not owners

    def hits(self, scanned: str) -> dict[str, _Hit]:
        """entry id → (end offset of its first hit, match) in an already prepared text, in
        order of first hit."""
        if self._empty or not scanned:
            return {}
        if len(self._automata) == 1:
            found: dict[str, _Hit] = {}
            for end, entries in self._automata[0].iter(scanned):
                for entry_id, alias, position, _ in entries:
                    if entry_id not in found:
                        found[entry_id] = (end, Match(entry_id, alias, position))
            return found
        return self._sharded_hits(scanned)

    def _sharded_hits(self, scanned: str) -> dict[str, _Hit]:
        """What one automaton over all patterns would report: per entry its first hit — the
        smallest end offset, at one end the longer pattern (output links run longest to
        shortest) — ordered by end, then pattern length, then list order."""
        best: dict[str, tuple[int, int, Match]] = {}
        for automaton in self._automata:
            for end, entries in automaton.iter(scanned):
                for entry_id, alias, position, shorter in entries:
                    known = best.get(entry_id)
                    if known is None or (end, shorter) < known[:2]:
                        best[entry_id] = (end, shorter, Match(entry_id, alias, position))
        ranked = sorted(best.values(), key=lambda hit: (hit[0], hit[1], hit[2].position))
        return {m.entry_id: (end, m) for end, _, m in ranked}

    def find(self, text: str, *, prepared: bool = False) -> list[Match]:
        """Entries named in ``text``, each once, in order of first appearance.

        Pass ``prepared=True`` when ``text`` is already a :func:`match_form` (the selection
        prepares each message once for all books).
        """
        if self._empty or not text:
            return []
        return [m for _, m in self.hits(text if prepared else match_form(text)).values()]


class OverlayMatcher:
    """A book version's matcher made of the previous version's automaton and a small one over
    the entries whose names changed (ADR 0008: no turn pays for an edit).

    Hits of the base for changed, added or removed entries are dropped, the overlay answers for
    the changed and added ones, and every position is the new version's — so ``find`` returns
    exactly what a full rebuild would, in the same order. Built in milliseconds; the cache
    replaces it with the full matcher once that is built in the background.
    """

    __slots__ = ("_base", "_changed", "_overlay", "book_id", "names", "positions", "version")

    def __init__(self, base: BookMatcher, book: LoreBook, changed: set[str]) -> None:
        self.book_id = book.id
        self.version = book.version
        self.positions: dict[str, int] = {e.id: i for i, e in enumerate(book.entries)}
        self.names = _names(book)
        self._base = base
        self._changed = changed
        self._overlay = BookMatcher(book, only=changed)

    def find(self, text: str, *, prepared: bool = False) -> list[Match]:
        if not text:
            return []
        scanned = text if prepared else match_form(text)
        found = [
            (end, Match(m.entry_id, m.alias, self.positions[m.entry_id]))
            for entry_id, (end, m) in self._base.hits(scanned).items()
            if entry_id not in self._changed and entry_id in self.positions
        ]
        found += list(self._overlay.hits(scanned).values())
        # The automaton's own order: by end offset; at one end the longer pattern first (its
        # output links run longest to shortest), then list order among owners of one pattern.
        found.sort(key=lambda hit: (hit[0], -len(alias_form(hit[1].alias)), hit[1].position))
        return [m for _, m in found]


AnyMatcher = BookMatcher | OverlayMatcher


def changed_names(before: dict[str, Names], book: LoreBook) -> set[str]:
    """Ids whose names or enabled flag differ between a matcher's book and ``book``, plus the
    added and removed ones."""
    after = _names(book)
    changed = {i for i, names in after.items() if before.get(i) != names}
    return changed | (before.keys() - after.keys())


class Matchers(Protocol):
    """Where the selection gets each book's matcher and the text it derives from one book
    version (entry cuts, index lines, sizes). The service passes its process-wide cache
    (``worldbook.runtime.matcher_cache.MatcherCache``); without one, :class:`TurnMatchers`."""

    def get(self, book: LoreBook) -> AnyMatcher: ...

    def derived(self, book: LoreBook, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``(book.id, book.version, *key)`` when the book
        has a version; ``key`` names everything else the value depends on."""
        ...


class TurnMatchers:
    """Matchers and derived texts remembered for one call only (no threads, no bound): what
    a library caller without a cache gets. Books without a version are never remembered."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], AnyMatcher] = {}
        self._derived: dict[tuple[str, ...], object] = {}

    def get(self, book: LoreBook) -> AnyMatcher:
        if not book.version:
            return BookMatcher(book)
        key = book.matcher_key
        found = self._items.get(key)
        if found is None:
            found = self._items[key] = BookMatcher(book)
        return found

    def derived(self, book: LoreBook, key: tuple[str, ...], compute: Callable[[], T]) -> T:
        if not book.version:
            return compute()
        full = (book.id, book.version, *key)
        if full not in self._derived:
            self._derived[full] = compute()
        return cast(T, self._derived[full])
