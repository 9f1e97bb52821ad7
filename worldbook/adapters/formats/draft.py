"""worldbook's own draft JSON: what ``worldbook generate`` and ``worldbook split`` print.

``{"title", "description", "entries": [{"title", "lore", "aliases", "canon"}], ...}`` — the
entries carry worldbook's field names, so they map one to one: title → title, lore → lore,
aliases → keys (which world mode turns back into aliases), canon → constant (world mode: canon).
Anything else (``warnings``, ``model``, ``separator``) is kept under ``"worldbook_draft"``.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import Fields, SourceBook, SourceEntry

NS = "worldbook_draft"


def is_draft(doc: dict[str, Any]) -> bool:
    entries = doc.get("entries")
    first = entries[0] if isinstance(entries, list) and entries else None
    return isinstance(first, dict) and "lore" in first and "title" in first


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = SourceEntry(label=where)
    e.title_hint = f.string("title")
    e.content = f.string("lore")
    e.keys = f.strings("aliases")
    e.constant = f.boolean("canon", False)
    e.enabled = f.boolean("enabled", True)
    f.used.add("separator")  # only there to rebuild a split text; never part of the lore
    return f.finish(e, NS)


def read(doc: dict[str, Any]) -> SourceBook:
    f = Fields(doc, "book")
    book = SourceBook(format="worldbook_draft")
    book.title = f.string("title")
    book.description = f.string("description")
    entries = f.entry_list("entries", "entries")
    book.entries = [_entry(item, f"entries[{i}]") for i, item in enumerate(entries)]
    f.used.update({"warnings", "model", "leading", "method", "saved"})
    f.keep_rest(book.extensions, NS)
    return book
