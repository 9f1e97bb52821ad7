"""The format-neutral entry every reader produces, and a strict field reader for JSON objects.

Readers never trust a type: :class:`Fields` checks each value it takes and raises
:class:`InvalidInput` naming the field. A value is marked *used* only when the draft field can
hold it exactly; everything else stays in :meth:`Fields.rest`, which becomes ``extensions``
verbatim so that export can write it back (formats.md §6: keep unknown keys for round trips).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from worldbook.adapters.formats.limits import ENTRIES_PER_BOOK_MAX
from worldbook.core.drafts import JSONDict
from worldbook.core.types import Role
from worldbook.errors import InvalidInput, LimitExceeded

ROLES: tuple[Role, Role, Role] = ("system", "user", "assistant")  # SillyTavern role 0, 1, 2
INT32_MAX = 2**31 - 1
ORDER_MIRROR = 200
"""SillyTavern, CCv3 and RisuAI place lower ``insertion_order`` earlier; worldbook places higher
``order`` earlier (DESIGN §3). Imports store ``ORDER_MIRROR - order`` and exports write it back,
so a book renders in its author's arrangement and round-trips to the same numbers; 200 keeps
the common default 100 at 100."""
ORDER_RANGE = (ORDER_MIRROR - INT32_MAX, INT32_MAX)
SUBSTRING_KEYS = {"whole_words": False}
"""Book settings of formats whose apps match keys anywhere in a word (KoboldAI, AI Dungeon,
NovelAI, RisuAI's default "partial" mode): their authors wrote keys for that."""
"""Source orders whose mirror fits the 32-bit column (others are read clamped, raw kept)."""
_RANGES: dict[str, tuple[int, int]] = {
    "order": ORDER_RANGE,
    "selective_logic": (0, 3),
    "probability": (0, 100),
}
"""The range of each numeric :class:`SourceEntry` field :meth:`Fields.fill` reads (clamped)."""


@dataclass(slots=True)
class SourceEntry:
    """One entry as read from a file, before fixing and mapping (SillyTavern semantics)."""

    label: str  # where it came from, for warnings: 'entries["3"]'
    title_hint: str = ""  # display name / comment
    comment: str = ""  # a separate memo, when the format has one besides the name
    content: str = ""
    keys: list[str] = field(default_factory=list)
    secondary_keys: list[str] = field(default_factory=list)
    selective: bool = False
    selective_logic: int = 0
    constant: bool = False
    enabled: bool = True
    order: int = 100  # the source's number: lower earlier (SillyTavern); mapping mirrors it
    priority: int | None = None  # None: the file has none (budget follows the order)
    role: Role = "system"
    whole_words: bool | None = None
    case_sensitive: bool | None = None
    probability: int = 100
    scan_depth: int | None = None
    extensions: JSONDict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # fixes made while reading


@dataclass(slots=True)
class SourceBook:
    """A whole book as read from a file: book fields plus entries in display order."""

    format: str
    title: str = ""
    description: str = ""
    settings: JSONDict = field(default_factory=dict)
    extensions: JSONDict = field(default_factory=dict)
    entries: list[SourceEntry] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: int = 0


def kind(value: object) -> str:
    """JSON type name of a decoded value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def or_default(value: object, default: object) -> object:
    """``value`` unless it is missing (None); unlike ``or``, keeps wrong-typed falsy values."""
    return default if value is None else value


def require_object(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput(f"{where} must be a JSON object; got {kind(value)}.", field=where)
    return value


def require_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a JSON array; got {kind(value)}.", field=where)
    return value


def check_count(count: int, where: str) -> None:
    """Refuse a book with more entries than a book may hold, before reading them (DESIGN §6)."""
    if count > ENTRIES_PER_BOOK_MAX:
        raise LimitExceeded(
            limit="entries per book",
            allowed=f"at most {ENTRIES_PER_BOOK_MAX:,}",
            actual=f"{count:,} in {where}",
            field=where,
            hint="Split the file into several books.",
        )


def split_commas(text: str) -> list[str]:
    """Comma-separated keys (KoboldAI, RisuAI, AI Dungeon) as a list, empties dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


class Fields:
    """Reads typed values out of one JSON object and remembers which keys were used."""

    def __init__(self, obj: object, where: str) -> None:
        self.obj = require_object(obj, where)
        self.where = where
        self.used: set[str] = set()
        self.notes: list[str] = []

    def _get(self, name: str) -> Any:
        return self.obj.get(name)

    def has(self, name: str) -> bool:
        return name in self.obj and self.obj[name] is not None

    def _bad(self, name: str, want: str) -> InvalidInput:
        path = f"{self.where}.{name}"
        got = kind(self.obj[name])
        return InvalidInput(f"{path} must be {want}; got {got}. Fix the file.", field=path)

    def string(self, name: str, default: str = "") -> str:
        value = self._get(name)
        if value is None:
            self.used.add(name)
            return default
        if isinstance(value, str):
            self.used.add(name)
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)  # a number where text belongs: read it, keep the raw value
        raise self._bad(name, "a string")

    def boolean(self, name: str, default: bool) -> bool:
        value = self._get(name)
        if value is None:
            return default
        if isinstance(value, bool):
            self.used.add(name)
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)  # 0/1 written by some tools; raw value kept
        raise self._bad(name, "true or false")

    def opt_boolean(self, name: str) -> bool | None:
        if name in self.obj and self.obj[name] is None:
            self.used.add(name)
            return None
        return self.boolean(name, default=False) if name in self.obj else None

    def integer(self, name: str, default: int, lo: int | None = None, hi: int | None = None) -> int:
        value = self._get(name)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(name, "a number")
        if isinstance(value, float) and not math.isfinite(value):
            raise self._bad(name, "a finite number")
        number = round(value)
        exact = number == value
        if lo is not None and number < lo:
            number, exact = lo, False
        if hi is not None and number > hi:
            number, exact = hi, False
        if exact:
            self.used.add(name)
        elif number != value:
            self.notes.append(f"{name} {value!r} read as {number} (original kept for export)")
        return int(number)

    def opt_integer(self, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
        if name in self.obj and self.obj[name] is None:
            self.used.add(name)
            return None
        return self.integer(name, 0, lo, hi) if name in self.obj else None

    def strings(self, name: str) -> list[str]:
        """A list of strings; a lone string counts as a one-item list (raw value kept)."""
        value = self._get(name)
        if value is None:
            self.used.add(name)
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list):
            raise self._bad(name, "an array of strings")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                path = f"{self.where}.{name}[{i}]"
                raise InvalidInput(
                    f"{path} must be a string; got {kind(item)}. Fix the file.", field=path
                )
        self.used.add(name)
        return list(value)

    def comma_strings(self, name: str) -> list[str]:
        """Keys written either as one comma-separated string or as an array of strings."""
        value = self._get(name)
        if isinstance(value, str):
            self.used.add(name)
            return split_commas(value)
        return self.strings(name)

    def role(self, name: str) -> Role:
        value = self._get(name)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2:
            self.used.add(name)
            return ROLES[value]
        if isinstance(value, str) and value in ROLES:
            return value  # raw string kept: export writes SillyTavern's number
        return "system"

    def rest(self) -> JSONDict:
        """Every key not read exactly, verbatim."""
        return {k: v for k, v in self.obj.items() if k not in self.used}

    def entry_list(self, name: str, where: str, *, required: bool = False) -> list[Any]:
        """The array of entries under ``name``, marked used and held to the per-book limit.

        A missing (null) array reads as empty unless ``required``.
        """
        value = self.obj.get(name)
        items = require_list(value if required else or_default(value, []), where)
        self.used.add(name)
        check_count(len(items), where)
        return items

    def entries(
        self, name: str, where: str, read: Callable[[object, str], SourceEntry]
    ) -> list[SourceEntry]:
        """The :meth:`entry_list` under ``name``, each item read by ``read(item, "where[i]")``."""
        return [read(item, f"{where}[{i}]") for i, item in enumerate(self.entry_list(name, where))]

    def fill(
        self, entry: SourceEntry, keys: Mapping[str, str], *, comma_lists: bool = False
    ) -> SourceEntry:
        """``entry`` with each field named in ``keys`` (field → source key) read as its type.

        Only plain fields: text (:meth:`string`), key lists (:meth:`strings`, or
        :meth:`comma_strings` with ``comma_lists``), flags and numbers (in :data:`_RANGES`). A
        missing key leaves the field's current value, so a format's own defaults are the values
        it builds the entry with. Keys are read in ``keys`` order (notes keep that order).
        """
        for name, key in keys.items():
            current = getattr(entry, name)
            value: object
            if isinstance(current, str):
                value = self.string(key, current)
            elif isinstance(current, list):
                value = self.comma_strings(key) if comma_lists else self.strings(key)
            elif isinstance(current, bool):
                value = self.boolean(key, current)
            elif isinstance(current, int):
                value = self.integer(key, current, *_RANGES.get(name, (None, None)))
            else:
                raise TypeError(f"SourceEntry.{name} is not a field Fields.fill reads")
            setattr(entry, name, value)
        return entry

    def keep_rest(self, extensions: JSONDict, namespace: str) -> None:
        """Store :meth:`rest`, if any, as ``extensions[namespace]`` so export can write it back."""
        rest = self.rest()
        if rest:
            extensions[namespace] = rest

    def finish(self, entry: SourceEntry, namespace: str) -> SourceEntry:
        """``entry`` with this object's unread keys kept under ``namespace`` and its notes."""
        self.keep_rest(entry.extensions, namespace)
        entry.notes.extend(self.notes)
        return entry


def titled_book(f: Fields, fmt: str, title_key: str) -> SourceBook:
    """A book of format ``fmt`` with its title (under ``title_key``) and description read."""
    return SourceBook(format=fmt, title=f.string(title_key), description=f.string("description"))
