"""Referent links for follow-ups (ADR 0016): "and her sister?" is about an entry the
conversation already established.

The referents of a turn are the entries the recent messages name (the literal matcher's hits,
DESIGN §2 rule 5), each weighted by how recent the message is: 1 for the newest, ``fade`` per
message further back. An entry whose lore names a referent (a backlink, found by the same
matcher over each entry's lore when the book's matcher is built) is linked to it. A linked
entry's meaning score is raised by ``link_weight * referent weight * max(0, newest)``, where
``newest`` is its similarity to the new message alone, centred: the link adds to what the new
message says and never replaces it, so a turn that changes topic (its new message unlike the
linked entry) is not dragged back to the old referent's neighbours.

Pure: plain mappings in and out. With no referents, or a link weight of 0, the hits come back
unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def referent_weights(named: Sequence[Collection[K]], fade: float) -> dict[K, float]:
    """Each entry named in the messages (oldest first) with the weight of its most recent
    mention: ``fade ** n`` for a mention ``n`` messages before the newest."""
    weights: dict[K, float] = {}
    last = len(named) - 1
    for i, keys in enumerate(named):
        for key in keys:
            weights[key] = max(weights.get(key, 0.0), fade ** (last - i))
    return weights


def backlinks(names_in_lore: Mapping[K, Collection[K]]) -> dict[K, frozenset[K]]:
    """``referent -> entries whose lore names it`` from ``entry -> entries its lore names``
    (an entry naming itself is no link)."""
    found: dict[K, set[K]] = {}
    for entry, named in names_in_lore.items():
        for referent in named:
            if referent != entry:
                found.setdefault(referent, set()).add(entry)
    return {referent: frozenset(entries) for referent, entries in found.items()}


def linked(referents: Mapping[K, float], links: Mapping[K, Collection[K]]) -> dict[K, float]:
    """Entries linked to a referent, each with its best referent's weight (the referents
    themselves are named already: they are not boosted for naming each other)."""
    out: dict[K, float] = {}
    for referent, weight in referents.items():
        for entry in links.get(referent, ()):
            if entry not in referents:
                out[entry] = max(out.get(entry, 0.0), weight)
    return out


def boosted(
    hits: Sequence[tuple[K, float]],
    links: Mapping[K, float],
    newest: Mapping[K, float],
    link_weight: float,
) -> list[tuple[K, float]]:
    """The hits re-scored with the referent links, best first (ties keep the hits' order). A
    linked entry that was not among the hits joins at the lowest hit score plus its boost."""
    if link_weight == 0 or not links:
        return list(hits)
    scores = dict(hits)
    floor = min(scores.values()) if scores else 0.0
    for key, weight in links.items():
        lift = link_weight * weight * max(0.0, newest.get(key, 0.0))
        if lift > 0:
            scores[key] = scores.get(key, floor) + lift
    order = {key: i for i, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def earlier_selections(turns: Sequence[Collection[K]], fade: float, gap: int = 2) -> dict[K, float]:
    """Referents from what the chat's previous turns selected (newest turn first): an entry
    selected ``t`` turns back weighs ``fade ** (gap * t)``, as if it was named ``gap * t``
    messages back (a turn is a user message and a reply), its most recent selection counting."""
    weights: dict[K, float] = {}
    for back, keys in enumerate(turns, start=1):
        for key in keys:
            weights[key] = max(weights.get(key, 0.0), fade ** (gap * back))
    return weights


def merged(*weights: Mapping[K, float]) -> dict[K, float]:
    """Referent weights of several sources, each entry with its highest."""
    out: dict[K, float] = {}
    for found in weights:
        for key, weight in found.items():
            out[key] = max(out.get(key, 0.0), weight)
    return out
