"""Import and export of every lorebook format people have (docs/design/import-export.md).

``parse_book`` reads bytes in any supported format (judged by content, not by name) and returns
drafts ready for the store, with every fix and skipped entry reported in ``warnings``; it never
writes anything. ``export_book`` writes SillyTavern World Info JSON or a CCv3 ``lorebook_v3``.
Hostile input ends in :class:`InvalidInput`, :class:`UnsupportedFormat` or
:class:`PayloadTooLarge`, within bounded time and memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from worldbook.adapters.formats import agnai, cards, draft, kobold, novelai, risu, sillytavern
from worldbook.adapters.formats.detect import SUPPORTED_FORMATS, Detected, detect, detect_format
from worldbook.adapters.formats.export import export_json
from worldbook.adapters.formats.limits import MAX_BYTES_DEFAULT
from worldbook.adapters.formats.mapping import ImportedBook, map_book
from worldbook.adapters.formats.source import SourceBook, require_object
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput, PayloadTooLarge

__all__ = [
    "SUPPORTED_FORMATS",
    "ImportedBook",
    "detect_format",
    "export_book",
    "parse_book",
]


def _read(found: Detected) -> SourceBook:
    fmt, doc = found.format, found.doc
    if fmt == "sillytavern":
        return sillytavern.read_book(require_object(doc, "book"))
    if fmt in ("ccv1_json", "ccv2_json", "ccv3_json", "ccv2_png", "ccv3_png", "ccv1_png"):
        return cards.read_card(require_object(doc, "card"), fmt)
    if fmt == "ccv3_charx":
        return cards.read_card(doc, fmt)
    if fmt == "lorebook_v3":
        return cards.read_character_book(doc.get("data"), "data", fmt, "")
    if fmt == "character_book":
        return cards.read_character_book(doc, "book", fmt, "")
    if fmt.startswith("novelai_"):
        return novelai.read(doc, "novelai_lorebook" if fmt == "novelai_png" else fmt)
    if fmt == "agnai":
        return agnai.read(doc)
    if fmt == "worldbook_draft":
        return draft.read(doc)
    if fmt == "risu":
        return risu.read(doc)
    if fmt in ("kobold", "kobold_united"):
        return kobold.read_save(doc, fmt)
    return kobold.read_aidungeon(doc)


def parse_book(
    data: bytes,
    *,
    mode: BookMode = BookMode.WORLD,
    filename: str | None = None,
    max_bytes: int = MAX_BYTES_DEFAULT,
) -> ImportedBook:
    """Read a lorebook file into drafts.

    Args:
        data: the file's bytes.
        mode: WORLD (keys become aliases, constant becomes canon) or CLASSIC (keys stay
            triggers).
        filename: only used to name a book whose file carries no name.
        max_bytes: larger inputs are refused before anything is parsed.

    Raises:
        PayloadTooLarge: ``data`` is larger than ``max_bytes``.
        UnsupportedFormat: the content is in no format in :data:`SUPPORTED_FORMATS`.
        InvalidInput: the file is damaged, has wrong types, or is a card with no lorebook.
        LimitExceeded: the file holds more entries than a book may (DESIGN §6).
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InvalidInput(f"data must be bytes; got {type(data).__name__}.", field="data")
    if len(data) > max_bytes:
        raise PayloadTooLarge(
            limit="import file",
            allowed=f"at most {max_bytes:,} bytes",
            actual=f"{len(data):,} bytes",
            hint="Split the book into smaller files.",
        )
    mode = BookMode(mode)
    found = detect(bytes(data), max_bytes=max_bytes)
    source = _read(found)
    source.notes[:0] = list(found.notes)
    result = map_book(source, mode, filename)
    result.format = found.format
    return result


def export_book(
    book: BookDraft,
    entries: Sequence[EntryDraft],
    fmt: Literal["sillytavern", "ccv3"],
) -> bytes:
    """UTF-8 JSON of the book in SillyTavern World Info or CCv3 ``lorebook_v3`` form."""
    return export_json(book, entries, fmt)
