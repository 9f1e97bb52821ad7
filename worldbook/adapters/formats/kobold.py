"""KoboldAI world info: classic story saves, United ``worldinfo_v2``, and AI Dungeon arrays.

formats.md §3.3: a classic save has ``worldinfo: [{key: "a,b", keysecondary, content, comment,
folder, selective, constant}]``; United has ``worldinfo_v2: {entries: {uid: {...}}, folders}``
with key arrays; the AI Dungeon export KoboldAI imports is a bare array of ``{keys: "a,b",
entry, ...}``. Only the world info is imported (not the story); unmapped fields stay under
``"kobold"`` / ``"aidungeon"``. List order is the file's order.
"""

from __future__ import annotations

from typing import Any

from worldbook.adapters.formats.source import (
    SUBSTRING_KEYS,
    Fields,
    SourceBook,
    SourceEntry,
    check_count,
    kind,
    require_list,
)
from worldbook.errors import InvalidInput


def _entry(obj: object, where: str, ns: str) -> SourceEntry:
    f = Fields(obj, where)
    e = SourceEntry(label=where)
    if ns == "aidungeon":
        e.title_hint = f.string("name") if f.has("name") else f.string("comment")
        e.content = f.string("entry")
        e.keys = f.comma_strings("keys")
    else:
        e.title_hint = f.string("title") if f.has("title") else f.string("comment")
        e.content = f.string("content")
        e.keys = f.comma_strings("key")
        e.secondary_keys = f.comma_strings("keysecondary")
        e.selective = f.boolean("selective", False)
        e.constant = f.boolean("constant", False)
    return f.finish(e, ns)


def read_save(doc: dict[str, Any], fmt: str) -> SourceBook:
    """``fmt`` is ``kobold`` (classic ``worldinfo``) or ``kobold_united`` (``worldinfo_v2``)."""
    book = SourceBook(format=fmt)
    if fmt == "kobold_united":
        wi = doc.get("worldinfo_v2")
        if not isinstance(wi, dict) or not isinstance(wi.get("entries", {}), dict):
            raise InvalidInput(
                f"worldinfo_v2 must be an object with an 'entries' object; got {kind(wi)}.",
                field="worldinfo_v2",
            )
        items = [(f'worldinfo_v2.entries["{k}"]', v) for k, v in wi.get("entries", {}).items()]
        kept = {k: v for k, v in wi.items() if k != "entries"}
    else:
        raw = require_list(doc.get("worldinfo"), "worldinfo")
        items = [(f"worldinfo[{i}]", v) for i, v in enumerate(raw)]
        kept = {k: doc[k] for k in ("wifolders_d", "wifolders_l") if k in doc}
    check_count(len(items), "worldinfo")
    book.entries = [_entry(item, where, "kobold") for where, item in items]
    book.settings.update(SUBSTRING_KEYS)
    if kept:
        book.extensions["kobold"] = kept
    return book


def read_aidungeon(doc: list[Any]) -> SourceBook:
    check_count(len(doc), "the array")
    book = SourceBook(format="aidungeon")
    book.entries = [_entry(item, f"[{i}]", "aidungeon") for i, item in enumerate(doc)]
    book.settings.update(SUBSTRING_KEYS)
    return book
