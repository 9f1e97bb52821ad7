"""JSON out of a language model's text: find it in prose, and rescue a reply cut short.

Models asked for JSON without a server-side grammar wrap it in code fences or sentences, and a
reply that hits the output-token limit stops mid-value. Both are read here, without trusting
anything: :func:`find_json_object` returns the first JSON object in the text (a fenced block
first, then each ``{`` in turn, as Marinara's Lorebook Maker does — docs/ai-authoring.md §1),
and :func:`close_truncated_json` keeps every array item that arrived whole and closes the
brackets left open, so a cut reply still yields its complete entries.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()
_MAX_STARTS = 200  # object starts tried in prose before giving up (bounded work on junk)


def _decode_object_at(text: str, start: int) -> dict[str, Any] | None:
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def find_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (whole, fenced, or embedded in prose), else None."""
    stripped = text.strip()
    whole = _decode_object_at(stripped, 0) if stripped.startswith("{") else None
    if whole is not None:
        return whole
    for fenced in _FENCE.findall(text):
        inner = fenced.strip()
        if inner.startswith("{") and (found := _decode_object_at(inner, 0)) is not None:
            return found
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_STARTS:
        found = _decode_object_at(text, start)
        if found is not None:
            return found
        tries += 1
        start = text.find("{", start + 1)
    return None


def close_truncated_json(text: str) -> dict[str, Any] | None:
    """A cut-off JSON object with its incomplete tail dropped and its brackets closed.

    The cut is made right after the last object or array that closed *as an array item*
    (``{"entries": [{…}, {…}, {"title": "Ha`` keeps the two whole entries), so no value is
    ever half kept. Returns None when nothing whole arrived.
    """
    begin = text.find("{")
    if begin == -1:
        return None
    stack: list[str] = []
    in_string = escaped = False
    best: tuple[int, str] | None = None  # (cut position, closers to append)
    for pos in range(begin, len(text)):
        char = text[pos]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack or stack[-1] != char:
                break  # malformed: keep what was safe so far
            stack.pop()
            if not stack:
                return _decode_object_at(text[begin : pos + 1], 0)
            if stack[-1] == "]":
                best = (pos + 1, "".join(reversed(stack)))
    if best is None:
        return None
    cut, closers = best
    return _decode_object_at(text[begin:cut] + closers, 0)
