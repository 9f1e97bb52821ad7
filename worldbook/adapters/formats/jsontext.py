"""Bytes to JSON, safely: encoding by BOM, nesting depth bounded before ``json.loads`` recurses.

``json.loads`` recurses once per nesting level; a 20 MB file of ``[`` would reach the interpreter's
recursion limit and every later tree walk would pay for the depth too. So the depth is measured
first on a stripped copy of the text (strings removed, only brackets left) with numpy, in bounded
chunks, and anything deeper than :data:`JSON_MAX_DEPTH` is refused; so is a file with more
containers than :data:`JSON_MAX_CONTAINERS` (building millions of tiny lists costs seconds).
NaN/Infinity are refused because no store or client accepts them.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import Any

import numpy as np

from worldbook.adapters.formats.limits import JSON_MAX_CONTAINERS, JSON_MAX_DEPTH
from worldbook.errors import InvalidInput

_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_DELTA = np.zeros(256, dtype=np.int8)
_DELTA[ord("[")] = _DELTA[ord("{")] = 1
_DELTA[ord("]")] = _DELTA[ord("}")] = -1
_CHUNK = 1 << 20


def decode_text(data: bytes) -> str:
    """Decode a text file: UTF-8 (BOM accepted) or UTF-16 with a BOM; anything else is refused."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    elif data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise InvalidInput("The file is UTF-32 text; save it as UTF-8 and import it again.")
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                "The file starts with a UTF-16 byte-order mark but is not valid UTF-16; "
                "save it as UTF-8 and import it again."
            ) from exc
    if b"\x00" in data[:64]:  # raw NUL bytes are never valid in JSON text
        raise InvalidInput(
            "The file looks like UTF-16 text without a byte-order mark; "
            "save it as UTF-8 and import it again."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"The file is not UTF-8 text (bad byte at offset {exc.start}). "
            "Save it as UTF-8 and import it again."
        ) from exc


def structure(text: str) -> tuple[int, int]:
    """(deepest nesting, number of arrays and objects) of JSON text, ignoring string contents."""
    # Remove escaped backslashes, then escaped quotes: left-to-right pairing is exactly how
    # JSON reads escapes, and afterwards every remaining '"' opens or closes a string.
    plain = text.replace("\\\\", "").replace('\\"', "")
    outside = _STRING.sub("", plain).encode("utf-8", errors="replace")
    brackets = outside.translate(None, delete=_NOT_BRACKET)
    containers = brackets.count(b"[") + brackets.count(b"{")
    depth, deepest = 0, 0
    for start in range(0, len(brackets), _CHUNK):
        steps = _DELTA[np.frombuffer(brackets[start : start + _CHUNK], dtype=np.uint8)]
        running = np.cumsum(steps, dtype=np.int64) + depth
        if running.size:
            deepest = max(deepest, int(running.max()))
            depth = int(running[-1])
        if deepest > JSON_MAX_DEPTH:
            break
    return deepest, containers


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is too large")
    return value


def load_json(text: str, what: str = "The file") -> Any:
    """Parse JSON text or raise InvalidInput saying where it broke."""
    text = text.lstrip("\ufeff")
    depth, containers = structure(text)
    if depth > JSON_MAX_DEPTH:
        raise InvalidInput(
            f"{what} nests JSON deeper than {JSON_MAX_DEPTH} levels; no lorebook needs that. "
            "Check that it is really a lorebook."
        )
    if containers > JSON_MAX_CONTAINERS:
        raise InvalidInput(
            f"{what} holds {containers:,} JSON arrays/objects, more than the "
            f"{JSON_MAX_CONTAINERS:,} any lorebook needs. Check that it is really a lorebook."
        )
    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}. "
            "It may be truncated or not a lorebook."
        ) from exc
    except (ValueError, RecursionError) as exc:  # NaN, huge integers, pathological nesting
        raise InvalidInput(f"{what} is not valid JSON: {exc}.") from exc
