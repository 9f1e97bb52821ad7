"""Copying a record into another dataclass field by field, where both use the same names.

A stored entry becomes a selection entry, a classic engine entry, …: most fields carry over
under the same name, and a hand-written ``a=record.a, b=record.b, …`` list would need editing
(and could silently miss a field) whenever both types gain one. Callers pass the fields whose
names or values differ themselves.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@cache
def _shared(source: type[DataclassInstance], target: type[DataclassInstance]) -> tuple[str, ...]:
    have = {f.name for f in fields(source)}
    return tuple(f.name for f in fields(target) if f.name in have)


def same_named(source: DataclassInstance, target: type[DataclassInstance]) -> dict[str, Any]:
    """``source``'s values of the fields of ``target`` that ``source`` has under the same name."""
    return {name: getattr(source, name) for name in _shared(type(source), target)}
