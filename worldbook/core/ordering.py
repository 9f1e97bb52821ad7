"""List order with sparse integer positions (pure; no SQL).

Entries carry integer positions spaced :data:`GAP` apart. Moving or inserting k entries between
two neighbours gives them evenly spread positions inside the gap, so a move writes only the k
moved rows. Only when the gap holds fewer than k free integers is the whole book renumbered
(positions GAP, 2·GAP, …) — after about log2(GAP) = 10 repeated insertions at the same spot.
Measured in benchmarks/bench_ordering.py; the decision is in docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal, Protocol

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


class OrderView(Protocol):
    """The positions of a book's entries that are NOT moving, as a store can read them cheaply:
    the ends, one entry's position, and the nearest neighbours of a position."""

    def lowest(self) -> int | None: ...
    def highest(self) -> int | None: ...
    def position_of(self, entry_id: str) -> int | None: ...
    def below(self, position: int) -> int | None: ...
    def above(self, position: int) -> int | None: ...


def gap_for(target: Target, view: OrderView) -> tuple[int | None, int | None]:
    """The neighbours ``(lo, hi)`` between which moved entries go (None = that end is open).

    The one reading of a target, shared by every store: "first" goes before the lowest,
    "last" after the highest, before/after an anchor between it and its neighbour."""
    if target == "first":
        return None, view.lowest()
    if target == "last":
        return view.highest(), None
    side, anchor = target
    at = view.position_of(anchor)
    if at is None:
        raise EntryNotFound(f"entry {anchor!r} is not in this book or is being moved.", field="to")
    return (view.below(at), at) if side == "before" else (at, view.above(at))


class ListOrder:
    """An :class:`OrderView` over an in-memory list of ``(id, position)`` in list order."""

    def __init__(self, order: Sequence[tuple[str, int]]) -> None:
        self._positions = [p for _, p in order]
        self._of = dict(order)

    def lowest(self) -> int | None:
        return self._positions[0] if self._positions else None

    def highest(self) -> int | None:
        return self._positions[-1] if self._positions else None

    def position_of(self, entry_id: str) -> int | None:
        return self._of.get(entry_id)

    def below(self, position: int) -> int | None:
        return max((p for p in self._positions if p < position), default=None)

    def above(self, position: int) -> int | None:
        return min((p for p in self._positions if p > position), default=None)


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
    if not moving:
        return {}
    lo, hi = gap_for(target, ListOrder(order))
    return spread_or_renumber(lo, hi, moving, lambda: order)


def spread_or_renumber(
    lo: int | None,
    hi: int | None,
    moving: Sequence[str],
    read_order: Callable[[], Sequence[tuple[str, int]]],
) -> dict[str, int]:
    """Positions for ``moving`` inside the gap, or — when the gap is used up — fresh positions
    for the whole book (``read_order()``: the non-moving entries, read only in that case)."""
    spread = spread_between(lo, hi, moving)
    if spread is not None:
        return spread
    order = list(read_order())
    index = sum(1 for _, p in order if lo is not None and p <= lo)
    ids = [e for e, _ in order]
    return renumber([*ids[:index], *moving, *ids[index:]])


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
