"""Timed effects (sticky, cooldown, delay) and match memory, per book (classic.md §2.6).

SillyTavern ``WorldInfoTimedEffects``, read for facts: at the start of a turn every stored effect
is checked against the chat length L. An effect is dropped when the chat did not advance past its
start (``L <= start``, a regenerated or deleted message) unless protected, when the entry no longer
has that effect or changed, or when its window is over (``L >= end``); a sticky that ends starts
the entry's cooldown at once (protected). After the turn, every injected entry with ``sticky`` /
``cooldown`` that has no such effect gets one from L to L + N. ``delay`` N blocks an entry while
L < N. Deleted entries lose their state at once (SillyTavern keeps it until the window ends).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from worldbook.core.classic.compiled import CompiledBook
from worldbook.core.classic.model import ClassicEntry
from worldbook.core.classic.state import NO_STATE, BookState, EntryChatState, TimedEffect


@dataclass(slots=True)
class BookTimers:
    """One book's timed state for this turn (entry index -> effect)."""

    length: int
    sticky: dict[int, TimedEffect] = field(default_factory=dict)
    cooldown: dict[int, TimedEffect] = field(default_factory=dict)
    matched: set[int] = field(default_factory=set)

    def delayed(self, entry: ClassicEntry) -> bool:
        return self.length < span(entry.delay)

    def on_cooldown(self, index: int) -> bool:
        return index in self.cooldown and index not in self.sticky


def span(value: int | None) -> int:
    """A timed-effect length; None, zero and negative values mean no effect."""
    return value if value is not None and value > 0 else 0


def _live(effect: TimedEffect, entry: ClassicEntry, length_of_effect: int, length: int) -> bool:
    """Whether a stored effect survives the start-of-turn checks (ended ones do not)."""
    if length <= effect.start and not effect.protected:
        return False  # the chat did not advance: the turn is being redone
    if not length_of_effect or effect.revision != entry.revision:
        return False
    return length < effect.end


def start_turn(book: CompiledBook, state: BookState, length: int) -> BookTimers:
    """Check the stored effects of one book at chat length ``length``."""
    timers = BookTimers(length)
    if not state:
        return timers
    by_id = {spec.entry.id: spec.index for spec in book.specs}
    for entry_id, stored in state.items():
        index = by_id.get(entry_id)
        if index is None:
            continue
        entry = book.specs[index].entry
        if stored.matched:
            timers.matched.add(index)
        sticky, cooldown = stored.sticky, stored.cooldown
        if sticky is not None and _live(sticky, entry, span(entry.sticky), length):
            timers.sticky[index] = sticky
        elif _sticky_ended(sticky, entry, length) and span(entry.cooldown):
            timers.cooldown[index] = TimedEffect(
                length, length + span(entry.cooldown), protected=True, revision=entry.revision
            )
            continue
        if cooldown is not None and _live(cooldown, entry, span(entry.cooldown), length):
            timers.cooldown[index] = cooldown
    return timers


def _sticky_ended(effect: TimedEffect | None, entry: ClassicEntry, length: int) -> bool:
    if effect is None or not span(entry.sticky) or effect.revision != entry.revision:
        return False
    if length <= effect.start and not effect.protected:
        return False
    return length >= effect.end


def next_state(book: CompiledBook, timers: BookTimers, injected: Iterable[int]) -> BookState:
    """The book's state after the turn: live effects, new effects of injected entries and the
    match memory of ``@@keep_activate_after_match`` / ``@@dont_activate_after_match``."""
    states: dict[int, EntryChatState] = {}

    def update(index: int, **changes: object) -> None:
        states[index] = replace(states.get(index, NO_STATE), **changes)  # type: ignore[arg-type]

    for index, effect in timers.sticky.items():
        update(index, sticky=effect)
    for index, effect in timers.cooldown.items():
        update(index, cooldown=effect)
    for index in timers.matched:
        update(index, matched=True)
    length = timers.length
    for index in injected:
        spec = book.specs[index]
        entry = spec.entry
        sticky, cooldown = span(entry.sticky), span(entry.cooldown)
        if sticky and index not in timers.sticky:
            update(index, sticky=TimedEffect(length, length + sticky, False, entry.revision))
        if cooldown and index not in timers.cooldown:
            update(index, cooldown=TimedEffect(length, length + cooldown, False, entry.revision))
        deco = spec.decorators
        if deco.keep_activate_after_match or deco.dont_activate_after_match:
            update(index, matched=True)
    return {book.specs[i].entry.id: s for i, s in states.items() if not s.empty}
