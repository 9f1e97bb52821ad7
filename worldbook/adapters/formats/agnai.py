"""Agnai memory books (``{"kind": "memory", ...}``; formats.md §3.2, agnai common/types/memory.ts).

Mapping as SillyTavern's ``convertAgnaiMemoryBook``: name → title, entry → content,
keywords → keys, weight → order, !enabled → disabled; plus priority → priority and the optional
SillyTavern-style fields Agnai copies from cards. The rest stays under ``"agnai"``. List order is
the array order.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import ORDER_RANGE, Fields, SourceBook, SourceEntry

NS = "agnai"


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = SourceEntry(label=where)
    e.title_hint = f.string("name")
    e.comment = f.string("comment")
    e.content = f.string("entry")
    e.keys = f.strings("keywords")
    e.secondary_keys = f.strings("secondaryKeys")
    if f.has("priority"):
        e.priority = f.integer("priority", 0)
    e.order = f.integer("weight", 0, *ORDER_RANGE)
    e.enabled = f.boolean("enabled", True)
    e.constant = f.boolean("constant", False)
    e.selective = f.boolean("selective", False)
    e.selective_logic = f.integer("selectiveLogic", 0, 0, 3)
    if f.obj.get("useProbability") is not False:
        e.probability = f.integer("probability", 100, 0, 100)
    return f.finish(e, NS)


def read(doc: dict[str, Any]) -> SourceBook:
    f = Fields(doc, "book")
    book = SourceBook(format="agnai")
    book.title = f.string("name")
    book.description = f.string("description")
    if f.has("scanDepth"):
        book.settings["scan_depth"] = f.integer("scanDepth", 0)
    if f.has("tokenBudget"):
        book.settings["token_budget"] = f.integer("tokenBudget", 0)
    if f.has("recursiveScanning"):
        book.settings["recursive_scanning"] = f.boolean("recursiveScanning", False)
    entries = f.entry_list("entries", "entries")
    book.entries = [_entry(item, f"entries[{i}]") for i, item in enumerate(entries)]
    f.keep_rest(book.extensions, NS)
    return book
