"""The referent links of a turn's books (ADR 0016, :mod:`worldbook.core.referents`): which
entries the recent messages name, and which entries' lore names those.

Both come from each book's literal matcher (the one the selection names entries with). The
backlinks of a book are found once per book version — every entry's lore through the matcher —
and kept with the book's matcher in the matcher cache.

The recent messages are scanned here, not taken from the core's literal pass, on purpose: that
pass runs after the search (it orders its hits by the search's meaning scores, ADR 0013) and
reads only the last user message and the character's last two replies, while a follow-up's
referent is often named further back (tests/service/test_aligned_view.py, "Her sister, then?").
Handing over the pass's hits changed the links of 22 of 70, 8 of 37 and 22 of 64 turns of the
saltreach, unseen and meridian hard sets; the scan costs 0.1–0.4 ms a turn (2026-12-06).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from worldbook.core.matching import match_form
from worldbook.core.referents import backlinks, linked, referent_weights
from worldbook.core.types import LoreBook
from worldbook.runtime.matcher_cache import MatcherCache

Key = tuple[str, str]  # (book id, entry id)


def book_backlinks(view: LoreBook, matchers: MatcherCache) -> dict[str, frozenset[str]]:
    """``entry -> entries whose lore names it`` in one book (cached per book version)."""

    def build() -> dict[str, frozenset[str]]:
        matcher = matchers.get(view)
        names = {e.id: [m.entry_id for m in matcher.find(e.lore)] for e in view.entries}
        return backlinks(names)

    return matchers.derived(view, ("backlinks",), build)


def named_entries(
    views: Mapping[str, LoreBook],
    book_ids: Sequence[str],
    matchers: MatcherCache,
    texts: Sequence[str],
    fade: float,
) -> dict[Key, float]:
    """The turn's referents: the entries of ``book_ids`` that ``texts`` (oldest first) name,
    each weighted by its most recent mention."""
    prepared = [match_form(t) for t in texts]
    out: dict[Key, float] = {}
    for book_id in dict.fromkeys(book_ids):
        view = views.get(book_id)
        if view is None:
            continue
        matcher = matchers.get(view)
        named = [[m.entry_id for m in matcher.find(t, prepared=True)] for t in prepared]
        out.update({(book_id, e): w for e, w in referent_weights(named, fade).items()})
    return out


def linked_entries(
    views: Mapping[str, LoreBook],
    matchers: MatcherCache,
    referents: Mapping[Key, float],
) -> dict[Key, float]:
    """Entries whose lore names one of the ``referents`` (of the same book), each with its
    referent's weight."""
    out: dict[Key, float] = {}
    for book_id in dict.fromkeys(b for b, _ in referents):
        view = views.get(book_id)
        if view is None:
            continue
        mine = {e: w for (b, e), w in referents.items() if b == book_id}
        found = linked(mine, book_backlinks(view, matchers))
        out.update({(book_id, entry): weight for entry, weight in found.items()})
    return out
