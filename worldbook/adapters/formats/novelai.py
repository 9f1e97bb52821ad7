"""NovelAI lorebooks: ``.lorebook`` files and the lorebook inside ``.scenario`` / ``.story``.

Fields from formats.md §3.1 (observed in real files; NovelAI is closed source). Mapping follows
SillyTavern's ``convertNovelLorebook`` (displayName → title, keys, text → content, !enabled →
disabled, ``contextConfig.budgetPriority`` → order) except that ``forceActivation`` becomes
``constant`` (ST drops it; RisuAI maps it to always-active). Everything else, including
``contextConfig`` and v2+ ``categories``, is kept under the ``"novelai"`` extension. List order
is the file's array order (NovelAI shows entries in that order).
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import (
    ORDER_RANGE,
    SUBSTRING_KEYS,
    Fields,
    SourceBook,
    SourceEntry,
    require_object,
)

NS = "novelai"
_DEFAULT_PRIORITY = 400  # NovelAI's default budgetPriority (every entry in the real samples)
_FIELDS = {  # SourceEntry field → NovelAI key (the order is under contextConfig)
    "title_hint": "displayName",
    "content": "text",
    "keys": "keys",
    "enabled": "enabled",
    "constant": "forceActivation",
}


def _entry(obj: object, where: str) -> SourceEntry:
    f = Fields(obj, where)
    e = f.fill(SourceEntry(label=where, order=_DEFAULT_PRIORITY), _FIELDS)
    config = f.obj.get("contextConfig")
    if isinstance(config, dict):
        budget = Fields(config, f"{where}.contextConfig")
        e.order = budget.integer("budgetPriority", _DEFAULT_PRIORITY, *ORDER_RANGE)
        e.notes.extend(budget.notes)
    return f.finish(e, NS)


def read_lorebook(lore: object, where: str, fmt: str) -> SourceBook:
    f = Fields(lore, where)
    book = SourceBook(format=fmt)
    book.entries = f.entries("entries", f"{where}.entries", _entry)
    f.keep_rest(book.extensions, NS)
    book.settings.update(SUBSTRING_KEYS)
    return book


def read(doc: dict[str, Any], fmt: str) -> SourceBook:
    """``fmt`` is ``novelai_lorebook``, ``novelai_scenario`` or ``novelai_story``."""
    if fmt == "novelai_scenario":
        book = read_lorebook(doc.get("lorebook"), "lorebook", fmt)
        meta: object = doc
    elif fmt == "novelai_story":
        content = require_object(doc.get("content"), "content")
        book = read_lorebook(content.get("lorebook"), "content.lorebook", fmt)
        meta = doc.get("metadata")
    else:
        book = read_lorebook(doc, "lorebook", fmt)
        meta = {}
    if isinstance(meta, dict):
        if isinstance(meta.get("title"), str):
            book.title = meta["title"]
        if isinstance(meta.get("description"), str):
            book.description = meta["description"]
    return book
