"""Who survives the token budget, and where survivors are placed (classic.md §1 rules 25–26).

Budget: activated entries are taken by priority, highest first (ties: placement order); the
first entry that would take the total over the budget is dropped, and so is every entry after
it — no back-filling with smaller ones, constants compete like any other entry, and no entry is
kept "because it is first": the total never exceeds the budget. Placement: higher ``order``
earlier, ties by higher priority, then list position, then lower entry id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from worldbook.core.classic.compiled import EntrySpec, PlacementKey

Ref = tuple[int, int]


class Costed(NamedTuple):
    """An activated entry with its token cost."""

    ref: Ref
    spec: EntrySpec
    tokens: int


def placement_key(spec: EntrySpec) -> PlacementKey:
    """Render order (rule 26): higher order first, then higher priority, then list
    position, then lower id
    (computed once per compiled entry, see ``compiled.placement``)."""
    return spec.placement


def render_key(item: Costed) -> tuple[object, ...]:
    """Placement across the pool: order, priority, then the book's place in the turn (DESIGN §2
    rule 2), then its list position and id."""
    order, priority, *rest = placement_key(item.spec)
    return (order, priority, item.ref[0], *rest)


def apply_budget(items: Sequence[Costed], budget: int) -> tuple[list[Costed], dict[Ref, str], int]:
    """(kept in placement order, dropped with reasons, tokens used) — rule 25."""
    ranked = sorted(items, key=lambda c: (-c.spec.priority, render_key(c)))
    kept: list[Costed] = []
    dropped: dict[Ref, str] = {}
    used = 0
    overflow: Costed | None = None
    for item in ranked:
        if overflow is None and used + item.tokens <= budget:
            kept.append(item)
            used += item.tokens
            continue
        if overflow is None:
            overflow = item
            dropped[item.ref] = (
                f"over budget: needs {item.tokens} tokens, {used} of {budget} used "
                f"(priority {item.spec.priority})"
            )
        else:
            dropped[item.ref] = (
                f"over budget: priority {item.spec.priority} comes after "
                f"{overflow.spec.entry.title!r} (priority {overflow.spec.priority}), which "
                "did not fit; lower priorities are not back-filled"
            )
    kept.sort(key=render_key)
    return kept, dropped, used
