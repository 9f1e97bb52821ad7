"""Bounds for JSON objects kept verbatim (``settings``, ``extensions``): depth, size, finite
numbers and clean text — so whatever is stored can always be returned (DESIGN §6: a 256-deep
object once saved, then failed every read of the book and of the public library)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from worldbook.core.limit_table import check_clean_text, check_count
from worldbook.errors import InvalidInput, LimitExceeded


def check_json_value(value: object, *, field: str, depth_max: int, bytes_max: int) -> None:
    """Check a JSON value kept verbatim: at most ``json_depth_max`` levels deep, at most
    ``json_bytes_max`` bytes as JSON, finite numbers, and no NUL characters or lone surrogates.

    Walked with an explicit stack, so a hostile depth cannot exhaust Python's recursion limit
    before it is refused.
    """
    stack: list[tuple[object, str, int]] = [(value, field, 1)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            check_clean_text(item, field=where)
            continue
        if isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(
                f"{where} must be a finite number (no NaN or Infinity).", field=where
            )
        children: list[tuple[object, str]] = []
        if isinstance(item, Mapping):
            for key, child in item.items():
                check_clean_text(str(key), field=where)
                children.append((child, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            children = [(child, f"{where}[{i}]") for i, child in enumerate(item)]
        if children and depth >= depth_max:
            raise LimitExceeded(
                limit="JSON nesting depth",
                allowed=f"at most {depth_max} levels",
                actual=f"more than {depth_max} levels",
                field=field,
                hint="Flatten the object.",
            )
        stack.extend((child, path, depth + 1) for child, path in children)
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{field} must be plain JSON ({exc}).", field=field) from exc
    check_count(
        size,
        limit="JSON object size",
        allowed_max=bytes_max,
        field=field,
        unit="bytes",
        hint="Keep large data outside worldbook.",
    )
