"""RisuAI lorebook exports (``{"type": "risu", "ver": 1, "data": [...]}``; formats.md §3.4).

Mapping as SillyTavern's ``convertRisuLorebook``: comma-separated ``key``/``secondkey``,
``alwaysActive`` → constant, ``insertorder`` → order, ``activationPercent`` → probability,
``comment`` → title; ``extentions.risu_case_sensitive`` (sic) → case sensitivity. Records with
``mode: "folder"`` are folders, not lore: they are counted as skipped, reported, and kept in the
book's ``"risu"`` extension. List order is the array order.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import (
    SUBSTRING_KEYS,
    Fields,
    SourceBook,
    SourceEntry,
    require_object,
)

NS = "risu"
_FIELDS = {  # SourceEntry field → RisuAI key
    "title_hint": "comment",
    "content": "content",
    "keys": "key",
    "secondary_keys": "secondkey",
    "order": "insertorder",
    "constant": "alwaysActive",
    "selective": "selective",
}


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = f.fill(SourceEntry(label=where), _FIELDS, comma_lists=True)
    if f.has("activationPercent"):
        e.probability = f.integer("activationPercent", 100, 0, 100)
    extras = f.rest().get("extentions")
    if isinstance(extras, dict) and isinstance(extras.get("risu_case_sensitive"), bool):
        e.case_sensitive = extras["risu_case_sensitive"]
    return f.finish(e, NS)


def read(doc: dict[str, Any]) -> SourceBook:
    f = Fields(doc, "book")
    book = SourceBook(format="risu")
    items = f.entry_list("data", "data", required=True)
    book.settings.update(SUBSTRING_KEYS)
    folders: list[Any] = []
    for i, item in enumerate(items):
        where = f"data[{i}]"
        if require_object(item, where).get("mode") == "folder":
            folders.append(item)
            book.notes.append(f"{where}: a folder record, not an entry; kept in extensions")
            book.skipped += 1
            continue
        book.entries.append(_entry(item, where))
    rest = f.rest()
    if folders:
        rest["folders"] = folders
    if rest:
        book.extensions[NS] = rest
    return book
