"""Agnai memory books (``{"kind": "memory", ...}``; formats.md §3.2, agnai common/types/memory.ts).

Mapping as SillyTavern's ``convertAgnaiMemoryBook``: name → title, entry → content,
keywords → keys, weight → order, !enabled → disabled; plus priority → priority and the optional
SillyTavern-style fields Agnai copies from cards. The rest stays under ``"agnai"``. List order is
the array order.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import Fields, SourceBook, SourceEntry, titled_book

NS = "agnai"
# SourceEntry field → Agnai key, in reading order; priority is read between the two.
_TEXT = {
    "title_hint": "name",
    "comment": "comment",
    "content": "entry",
    "keys": "keywords",
    "secondary_keys": "secondaryKeys",
}
_SETTINGS = {
    "order": "weight",
    "enabled": "enabled",
    "constant": "constant",
    "selective": "selective",
    "selective_logic": "selectiveLogic",
}


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = f.fill(SourceEntry(label=where, order=0), _TEXT)  # a missing weight is 0
    if f.has("priority"):
        e.priority = f.integer("priority", 0)
    f.fill(e, _SETTINGS)
    if f.obj.get("useProbability") is not False:
        e.probability = f.integer("probability", 100, 0, 100)
    return f.finish(e, NS)


def read(doc: dict[str, Any]) -> SourceBook:
    f = Fields(doc, "book")
    book = titled_book(f, "agnai", "name")
    if f.has("scanDepth"):
        book.settings["scan_depth"] = f.integer("scanDepth", 0)
    if f.has("tokenBudget"):
        book.settings["token_budget"] = f.integer("tokenBudget", 0)
    if f.has("recursiveScanning"):
        book.settings["recursive_scanning"] = f.boolean("recursiveScanning", False)
    book.entries = f.entries("entries", "entries", _entry)
    f.keep_rest(book.extensions, NS)
    return book
