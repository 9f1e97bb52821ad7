"""List order with sparse integer positions (pure; no SQL).

Entries carry integer positions spaced :data:`GAP` apart. Moving or inserting k entries between
two neighbours gives them evenly spread positions inside the gap, so a move writes only the k
moved rows. Only when the gap holds fewer than k free integers is the whole book renumbered
(positions GAP, 2·GAP, …) — after about log2(GAP) = 10 repeated insertions at the same spot.
Measured in benchmarks/bench_ordering.py; the decision is in docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from worldbook.errors import EntryNotFound, InvalidInput

GAP = 1024

Target = Literal["first", "last"] | tuple[Literal["before", "after"], str]


def parse_target(target: object) -> Target:
    """Validate a move/insert target: "first", "last", ("before", id) or ("after", id)."""
    if target in ("first", "last"):
        return target
    if (
        isinstance(target, tuple | list)
        and len(target) == 2
        and target[0] in ("before", "after")
        and isinstance(target[1], str)
    ):
        return (target[0], target[1])
    raise InvalidInput(
        'position must be "first", "last", ("before", entry_id) or ("after", entry_id).',
        field="to",
    )


def place(
    order: Sequence[tuple[str, int]], moving: Sequence[str], target: Target
) -> dict[str, int]:
    """New positions for ``moving`` (in that order) put at ``target``.

    Args:
        order: the book's entries that are NOT moving, as (id, position), in list order.
        moving: ids to place, in the order they must end up in.
        target: where they go; an anchor id must be in ``order``.

    Returns:
        id → new position for every row whose position changes (only the moved ones, unless the
        gap was exhausted and the whole book is renumbered).
    """
    k = len(moving)
    if k == 0:
        return {}
    if target == "first":
        index = 0
    elif target == "last":
        index = len(order)
    else:
        side, anchor = target
        at = next((i for i, (eid, _) in enumerate(order) if eid == anchor), None)
        if at is None:
            raise EntryNotFound(
                f"entry {anchor!r} is not in this book or is being moved.", field="to"
            )
        index = at if side == "before" else at + 1
    lo = order[index - 1][1] if index > 0 else None
    hi = order[index][1] if index < len(order) else None
    spread = spread_between(lo, hi, moving)
    if spread is not None:
        return spread
    return renumber(
        [eid for eid, _ in order[:index]] + list(moving) + [e for e, _ in order[index:]]
    )


def spread_between(lo: int | None, hi: int | None, moving: Sequence[str]) -> dict[str, int] | None:
    """Positions for ``moving`` strictly between neighbours ``lo`` and ``hi`` (None = list end).

    Returns None when the gap holds fewer than ``len(moving)`` free integers (renumber then).
    """
    k = len(moving)
    if lo is None and hi is None:
        return {eid: GAP * (i + 1) for i, eid in enumerate(moving)}
    if lo is None:
        assert hi is not None
        return {eid: hi - GAP * (k - i) for i, eid in enumerate(moving)}
    if hi is None:
        return {eid: lo + GAP * (i + 1) for i, eid in enumerate(moving)}
    step = (hi - lo) // (k + 1)
    if step < 1:
        return None
    return {eid: lo + step * (i + 1) for i, eid in enumerate(moving)}


def renumber(ids: Sequence[str]) -> dict[str, int]:
    """Fresh, evenly spaced positions for a whole book in the given order."""
    return {eid: GAP * (i + 1) for i, eid in enumerate(ids)}
