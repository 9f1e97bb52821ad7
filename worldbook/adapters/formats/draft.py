"""worldbook's own draft JSON: what ``worldbook generate`` and ``worldbook split`` print.

``{"title", "description", "entries": [{"title", "lore", "aliases", "canon"}], ...}`` — the
entries carry worldbook's field names, so they map one to one: title → title, lore → lore,
aliases → keys (which world mode turns back into aliases), canon → constant (world mode: canon).
Anything else (``warnings``, ``model``, ``separator``) is kept under ``"worldbook_draft"``.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import Fields, SourceBook, SourceEntry, titled_book

NS = "worldbook_draft"
_FIELDS = {  # SourceEntry field → draft key
    "title_hint": "title",
    "content": "lore",
    "keys": "aliases",
    "constant": "canon",
    "enabled": "enabled",
}


def is_draft(doc: dict[str, Any]) -> bool:
    entries = doc.get("entries")
    first = entries[0] if isinstance(entries, list) and entries else None
    return isinstance(first, dict) and "lore" in first and "title" in first


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = f.fill(SourceEntry(label=where), _FIELDS)
    f.used.add("separator")  # only there to rebuild a split text; never part of the lore
    return f.finish(e, NS)


def read(doc: dict[str, Any]) -> SourceBook:
    f = Fields(doc, "book")
    book = titled_book(f, "worldbook_draft", "title")
    book.entries = f.entries("entries", "entries", _entry)
    f.used.update({"warnings", "model", "leading", "method", "saved"})
    f.keep_rest(book.extensions, NS)
    return book
