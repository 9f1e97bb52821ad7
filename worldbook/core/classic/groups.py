"""Inclusion groups: of the entries of one group that match in a pass, one goes on (SillyTavern
``filterByInclusionGroups``, classic.md §2.5), read for facts and applied with its bug 13 fixed.

For each group, in order of first appearance among the pass's matches (placement order): a sticky
member wins outright; a group that already has an activated member from an earlier pass takes
nobody new (membership counts every group an entry lists); group scoring keeps the members with
the highest key score; then a ``group_override`` member wins (highest order first); otherwise one
member is drawn with probability proportional to its ``group_weight`` (a seeded draw). An entry
removed by one of its groups does not compete in the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from worldbook.core.classic.compiled import EntrySpec
from worldbook.core.classic.evaluate import Outcome

Ref = tuple[int, int]  # (book position in the pool, entry index in its book)


class Matched(NamedTuple):
    """An entry that matched in this pass, before groups and probability."""

    ref: Ref
    spec: EntrySpec
    outcome: Outcome
    sticky: bool


def filter_groups(
    matched: Sequence[Matched],
    active_groups: Mapping[str, str],
    draw: Callable[[str], float],
) -> tuple[list[Matched], dict[Ref, str]]:
    """(survivors in the given order, losers with their reason). ``active_groups`` maps a group
    to the title of its member activated in an earlier pass; ``draw(group)`` is in [0, 1)."""
    by_group: dict[str, list[Matched]] = {}
    for item in matched:
        for group in item.spec.groups:
            by_group.setdefault(group, []).append(item)
    losers: dict[Ref, str] = {}
    for group, all_members in by_group.items():
        members = [m for m in all_members if m.ref not in losers]
        if not members:
            continue
        for loser, reason in _decide(group, members, active_groups, draw).items():
            losers.setdefault(loser, reason)
    return [m for m in matched if m.ref not in losers], losers


def _decide(
    group: str,
    members: list[Matched],
    active_groups: Mapping[str, str],
    draw: Callable[[str], float],
) -> dict[Ref, str]:
    """The losers of one group and why."""
    sticky = [m for m in members if m.sticky]
    if sticky:
        winner = sticky[0].spec.entry.title
        return {
            m.ref: f"lost inclusion group {group!r} to sticky {winner!r}"
            for m in members
            if not m.sticky
        }
    if group in active_groups:
        earlier = active_groups[group]
        reason = f"inclusion group {group!r} already has {earlier!r} from an earlier pass"
        return {m.ref: reason for m in members}
    losers: dict[Ref, str] = {}
    if any(m.spec.group_scoring for m in members):
        best = max(m.outcome.score for m in members)
        for m in members:
            if m.spec.group_scoring and m.outcome.score < best:
                losers[m.ref] = (
                    f"lost inclusion group {group!r} on key score ({m.outcome.score} < {best})"
                )
        members = [m for m in members if m.ref not in losers]
    if len(members) <= 1:
        return losers
    override = [m for m in members if m.spec.entry.group_override]
    if override:
        winner_item = max(override, key=lambda m: m.spec.order)  # first of the highest order
        how = "group override, highest order"
    else:
        winner_item, how = _weighted(group, members, draw)
    title = winner_item.spec.entry.title
    for m in members:
        if m is not winner_item:
            losers[m.ref] = f"lost inclusion group {group!r} to {title!r} ({how})"
    return losers


def _weighted(
    group: str, members: list[Matched], draw: Callable[[str], float]
) -> tuple[Matched, str]:
    weights = [max(0, m.spec.entry.group_weight) for m in members]
    total = sum(weights)
    roll = draw(group) * total
    cumulative = 0
    for item, weight in zip(members, weights, strict=True):
        cumulative += weight
        if roll < cumulative:
            return item, f"weighted draw {roll:.1f} of {total}"
    return members[0], f"weighted draw {roll:.1f} of {total}"  # every weight is zero
