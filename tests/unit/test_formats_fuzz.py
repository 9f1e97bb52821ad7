"""Fuzz: mutated sample files import cleanly or fail with a WorldbookError — nothing else.

Mutations: byte flips/inserts/truncation of the raw files (JSON and PNG), and structural edits
of the decoded JSON (a value anywhere replaced by any JSON value), re-wrapped into a PNG card
for the PNG samples so the mutation reaches the parser rather than the base64 layer.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit._formats_helpers import SAMPLES, card_png, needs_samples, sample
from worldbook.adapters.formats import ImportedBook, export_book, parse_book
from worldbook.adapters.formats.png import text_chunks
from worldbook.core.types import BookMode
from worldbook.errors import WorldbookError

pytestmark = [needs_samples, pytest.mark.samples]

NAMES = sorted(p.name for p in SAMPLES.glob("*") if p.suffix != ".md") if SAMPLES.is_dir() else []

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@cache
def decoded(name: str) -> Any:
    data = sample(name)
    if data.startswith(b"\x89PNG"):
        chunks = text_chunks(data)
        return json.loads(base64.b64decode(chunks.get("ccv3") or chunks["chara"]))
    return json.loads(data.decode("utf-8-sig"))


def slots(doc: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in a JSON tree, in a stable order."""
    found: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            found.append((node, key))
            if isinstance(value, dict | list):
                stack.append(value)
    return found


def check(data: bytes, mode: BookMode) -> None:
    try:
        result = parse_book(data, mode=mode)
    except WorldbookError:
        return
    assert isinstance(result, ImportedBook)
    for fmt in ("sillytavern", "ccv3"):
        again = parse_book(export_book(result.book, result.entries, fmt), mode=mode)  # type: ignore[arg-type]
        assert [e.lore for e in again.entries] == [e.lore for e in result.entries]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 255), st.sampled_from("fid")), max_size=6
    ),
    cut=st.none() | st.floats(0, 1),
    mode=st.sampled_from(list(BookMode)),
)
def test_byte_mutations_never_escape(
    name: str, edits: list[tuple[float, int, str]], cut: float | None, mode: BookMode
) -> None:
    data = bytearray(sample(name))
    for where, byte, how in edits:
        at = int(where * (len(data) - 1))
        if how == "f":
            data[at] = byte
        elif how == "i":
            data[at:at] = bytes([byte])
        else:
            del data[at]
    if cut is not None:
        del data[int(cut * len(data)) :]
    check(bytes(data), mode)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    picks=st.lists(st.tuples(st.floats(0, 1), json_values), min_size=1, max_size=4),
    mode=st.sampled_from(list(BookMode)),
)
def test_json_mutations_never_escape(
    name: str, picks: list[tuple[float, Any]], mode: BookMode
) -> None:
    doc = json.loads(json.dumps(decoded(name)))
    for where, value in picks:
        places = slots(doc)
        if not places:
            break
        container, key = places[int(where * (len(places) - 1))]
        container[key] = value
    body = json.dumps(doc, ensure_ascii=False)
    data = card_png("chara", doc) if name.endswith(".png") else body.encode()
    check(data, mode)
