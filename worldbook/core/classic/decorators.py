"""``@@`` decorators of one entry (classic.md §1 rules 16–21; CCv3 SPEC_V3 "Decorators").

The CCv3 set plus RisuAI's ``@@probability`` / ``@@priority`` and DESIGN's ``@@order``. A
decorator line is ``@@name value``; the first line of a name wins except for the repeatable
``@@additional_keys`` / ``@@exclude_keys``. Unknown names and invalid values are ignored; a
``@@@name`` line is a fallback of the line before it and is applied only when that line (and
every fallback before it) was not (rule 16). Placement-only decorators (``@@depth``,
``@@position``, …) are recognised but have no effect: classic lore renders into one slot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from worldbook.core.classic.model import MAX_SCAN_DEPTH, ROLES, ClassicRole


@dataclass(frozen=True, slots=True)
class EntryDecorators:
    activate: bool = False
    dont_activate: bool = False
    activate_only_after: int | None = None
    activate_only_every: int | None = None
    keep_activate_after_match: bool = False
    dont_activate_after_match: bool = False
    is_greeting: int | None = None
    scan_depth: int | None = None
    role: ClassicRole | None = None
    probability: int | None = None
    priority: int | None = None
    order: int | None = None
    ignore_on_max_context: bool = False
    additional_keys: tuple[tuple[str, ...], ...] = ()
    exclude_keys: tuple[str, ...] = ()
    ignored: tuple[str, ...] = field(default=())  # lines not applied, for the trace

    @property
    def gated(self) -> bool:
        """Whether an eligibility condition depends on the chat (rule 18, state)."""
        return (
            self.activate_only_after is not None
            or self.activate_only_every is not None
            or self.is_greeting is not None
            or self.dont_activate_after_match
        )


PRIORITY_IGNORE_ON_MAX_CONTEXT = -1000  # RisuAI: ``ignore_on_max_context`` → priority -1000

_FLAGS = {
    "activate": "activate",
    "dont_activate": "dont_activate",
    "keep_activate_after_match": "keep_activate_after_match",
    "dont_activate_after_match": "dont_activate_after_match",
    "ignore_on_max_context": "ignore_on_max_context",
}
# Recognised, no effect in a one-slot render (DESIGN §3), or UI-only.
_NO_EFFECT_INT = {"depth", "instruct_depth", "reverse_depth", "reverse_instruct_depth"}
_NO_EFFECT_INT |= {"instruct_scan_depth"}
_NO_EFFECT_FLAG = {"disable_ui_prompt", "is_user_icon"}
_POSITIONS = {"after_desc", "before_desc", "personality", "scenario"}
_REPEATABLE = {"additional_keys", "exclude_keys"}


def _int(value: str, low: int | None = None, high: int | None = None) -> int | None:
    try:
        number = int(value.strip())
    except ValueError:
        return None
    if (low is not None and number < low) or (high is not None and number > high):
        return None
    return number


def _with(d: EntryDecorators, name: str, value: object) -> EntryDecorators:
    changes: dict[str, Any] = {name: value}
    return replace(d, **changes)


def _keys(value: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in value.split(",") if k.strip())


_Apply = Callable[[EntryDecorators, str], EntryDecorators | None]


def _set_int(name: str, low: int | None, high: int | None) -> _Apply:
    def apply(d: EntryDecorators, value: str) -> EntryDecorators | None:
        number = _int(value, low, high)
        return None if number is None else _with(d, name, number)

    return apply


def _role(d: EntryDecorators, value: str) -> EntryDecorators | None:
    role = value.strip().lower()
    return _with(d, "role", role) if role in ROLES else None


def _additional(d: EntryDecorators, value: str) -> EntryDecorators | None:
    keys = _keys(value)
    return replace(d, additional_keys=(*d.additional_keys, keys)) if keys else None


def _exclude(d: EntryDecorators, value: str) -> EntryDecorators | None:
    keys = _keys(value)
    return replace(d, exclude_keys=(*d.exclude_keys, *keys)) if keys else None


_SETTERS: dict[str, _Apply] = {
    "activate_only_after": _set_int("activate_only_after", 0, None),
    "activate_only_every": _set_int("activate_only_every", 1, None),
    "is_greeting": _set_int("is_greeting", 0, None),
    "scan_depth": _set_int("scan_depth", 0, MAX_SCAN_DEPTH),
    "probability": _set_int("probability", 0, 100),
    "priority": _set_int("priority", None, None),
    "order": _set_int("order", None, None),
    "role": _role,
    "additional_keys": _additional,
    "exclude_keys": _exclude,
}


def _apply(d: EntryDecorators, name: str, value: str, seen: set[str]) -> EntryDecorators | None:
    """``d`` with one decorator applied, or None when the line is unknown or invalid."""
    if name in _FLAGS:
        return _with(d, _FLAGS[name], True)
    if name in _NO_EFFECT_FLAG:
        return d
    if name in _NO_EFFECT_INT:
        return d if _int(value) is not None else None
    if name == "position":
        return d if value.strip() in _POSITIONS else None
    setter = _SETTERS.get(name)
    if setter is None:
        return None
    if name in seen and name not in _REPEATABLE:
        return d  # recognised; the first line of a name wins (CCv3)
    return setter(d, value)


def split_line(line: str) -> tuple[str, str, bool]:
    """``"@@scan_depth 4"`` → ``("scan_depth", "4", False)``; ``@@@`` lines give True."""
    fallback = line.startswith("@@@")
    body = line[3:] if fallback else line[2:]
    name, _, value = body.strip().partition(" ")
    return name.strip().lower(), value.strip(), fallback


def parse_decorators(lines: Iterable[str]) -> EntryDecorators:
    """Apply decorator lines in order, honouring ``@@@`` fallback chains (rule 16)."""
    result = EntryDecorators()
    seen: set[str] = set()
    ignored: list[str] = []
    chain_done = False  # the current chain (a @@ line and its @@@ fallbacks) already applied
    for raw in lines:
        line = raw.strip()
        if not line.startswith("@@"):
            continue
        name, value, fallback = split_line(line)
        if fallback and chain_done:
            continue
        applied = _apply(result, name, value, seen) if name else None
        if applied is None:
            ignored.append(line)
            chain_done = False
            continue
        result = applied
        seen.add(name)
        chain_done = True
    return replace(result, ignored=tuple(ignored))


def split_content(content: str) -> tuple[list[str], str]:
    """Leading ``@@`` lines of ``content`` and the rest (CCv3: the first other line ends them)."""
    lines: list[str] = []
    rest = content
    while rest.startswith("@@"):
        line, newline, tail = rest.partition("\n")
        lines.append(line.rstrip("\r"))
        rest = tail if newline else ""
    return lines, rest
