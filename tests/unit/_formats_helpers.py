"""Shared helpers for the format tests: sample location and synthetic container builders."""

from __future__ import annotations

import base64
import io
import json
import struct
import zipfile
import zlib
from typing import Any

import pytest

from tests.samples import SAMPLES_ROOT

SAMPLES = SAMPLES_ROOT / "lorebooks"

needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"sample folder {SAMPLES} is absent (it lives beside the repo)"
)


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def chunk(ctype: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(body, zlib.crc32(ctype))
    return struct.pack(">I", len(body)) + ctype + body + struct.pack(">I", crc)


def text_chunk(keyword: str, doc: Any) -> bytes:
    payload = base64.b64encode(json.dumps(doc).encode("utf-8"))
    return chunk(b"tEXt", keyword.encode("latin-1") + b"\x00" + payload)


def make_png(*chunks: bytes) -> bytes:
    """A tiny valid PNG (1x1 grey) with extra chunks before IEND."""
    ihdr = chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
    idat = chunk(b"IDAT", zlib.compress(b"\x00\x80"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + idat + b"".join(chunks) + chunk(b"IEND", b"")


def card_png(keyword: str, doc: Any) -> bytes:
    """A tiny PNG carrying ``doc`` in one tEXt chunk named ``keyword``, as cards travel."""
    return make_png(text_chunk(keyword, doc))


def make_zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in files.items():
            archive.writestr(name, body)
    return buffer.getvalue()


def dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


LORE = "A long enough piece of lore about the place, well over twenty characters."
