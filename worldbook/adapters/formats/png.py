"""A minimal, bounded PNG chunk reader: just enough to find card text chunks.

Follows the PNG spec's chunk layout (length, type, data, CRC; ISO/IEC 15948 §5.3): verify the
signature, walk chunks with every length checked against what is left, stop at IEND. CRCs are
checked only when asked (card writers are not always careful, and a bad CRC in pixel data should
not block a lorebook import). Only ``tEXt`` and uncompressed ``iTXt`` are read; the card specs
(V2 ``chara``, V3 ``ccv3``, NovelAI ``naidata``) use ``tEXt``.
"""

from __future__ import annotations

import struct
import zlib

from worldbook.adapters.formats.limits import PNG_MAX_CHUNKS
from worldbook.errors import InvalidInput

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_MAX_CHUNK = 2**31 - 1  # PNG spec: lengths above this are invalid


def is_png(data: bytes) -> bool:
    return data.startswith(SIGNATURE)


def text_chunks(data: bytes, *, verify_crc: bool = False) -> dict[str, str]:
    """Keyword → text of every tEXt/iTXt chunk (first occurrence wins), up to IEND."""
    if not is_png(data):
        raise InvalidInput("The file is not a PNG image (bad signature).")
    view = memoryview(data)
    pos, count = len(SIGNATURE), 0
    found: dict[str, str] = {}
    while True:
        if pos + 8 > len(data):
            raise InvalidInput("The PNG file is truncated (it ends before its IEND chunk).")
        length, ctype = struct.unpack(">I4s", view[pos : pos + 8])
        if length > _MAX_CHUNK or pos + 12 + length > len(data):
            raise InvalidInput(
                f"The PNG file is truncated or corrupt: chunk {ctype!r} at byte {pos} "
                f"claims {length} bytes but only {len(data) - pos - 12} remain."
            )
        if not ctype.isalpha():
            raise InvalidInput(f"The PNG file is corrupt: bad chunk type {ctype!r} at byte {pos}.")
        body = view[pos + 8 : pos + 8 + length]
        if verify_crc:
            (crc,) = struct.unpack(">I", view[pos + 8 + length : pos + 12 + length])
            if zlib.crc32(body, zlib.crc32(ctype)) != crc:
                raise InvalidInput(f"The PNG chunk {ctype!r} at byte {pos} has a bad CRC.")
        if ctype == b"IEND":
            return found
        if ctype in (b"tEXt", b"iTXt"):
            _read_text(bytes(body), ctype == b"iTXt", found)
        pos += 12 + length
        count += 1
        if count > PNG_MAX_CHUNKS:
            raise InvalidInput(f"The PNG file has more than {PNG_MAX_CHUNKS} chunks; refused.")


def _read_text(body: bytes, international: bool, found: dict[str, str]) -> None:
    keyword, sep, rest = body.partition(b"\x00")
    if not sep or not keyword:
        return  # malformed text chunk: not a card chunk, ignore like other unknown chunks
    name = keyword.decode("latin-1")
    if name in found:
        return
    if not international:
        found[name] = rest.decode("latin-1")
        return
    # iTXt: compression flag, method, language\0, translated keyword\0, UTF-8 text
    if len(rest) < 2 or rest[0] != 0:
        return  # compressed iTXt: no card writer uses it; skip rather than inflate
    _lang, _, tail = rest[2:].partition(b"\x00")
    _translated, _, text = tail.partition(b"\x00")
    found[name] = text.decode("utf-8", errors="replace")
