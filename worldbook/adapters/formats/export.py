"""Books → SillyTavern World Info JSON and CCv3 ``lorebook_v3`` JSON.

SillyTavern's own import needs only an ``entries`` object (ST-2024 ``src/endpoints/worldinfo.js``);
entries are keyed by their uid as a string and carry the fields its editor reads (the minimal
set of its shipped ``Eldoria.json`` plus the ones we map). The CCv3 writer follows SPEC_V3's
Lorebook with SillyTavern's fields in each entry's ``extensions`` (formats.md §1.4). Kept
``extensions`` are written back verbatim, after the mapped fields, so an unrepresentable source
value (say ``probability: null``) returns exactly. The display comment, when there is one, rides
in a ``worldbook`` key; SillyTavern's ``comment`` is the title.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from worldbook.adapters.formats.cards import CARD_NS
from worldbook.adapters.formats.decorators import join_decorators
from worldbook.adapters.formats.mapping import MARKER, derive_aliases, to_source_order
from worldbook.adapters.formats.sillytavern import ST_TO_CARD_EXT
from worldbook.adapters.formats.source import ROLES
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput

_MAX_UID = 1_000_000  # SillyTavern getFreeWorldEntryUid's ceiling


def _order_and_priority(entry: EntryDraft) -> tuple[int, int | None]:
    """The source app's order (lower earlier: the mirror of ours) and the priority to write:
    none when it is what the source app infers from the order (SillyTavern budgets by order,
    CCv3 "MAY follow insertion_order"), so a round trip gives the file's numbers back."""
    order = to_source_order(entry.order)
    priority = entry.order if entry.priority is None else entry.priority
    return order, (None if priority == order else priority)


def _keys_and_constant(book: BookDraft, entry: EntryDraft) -> tuple[list[str], bool]:
    """World books edit aliases and canon; classic books edit keys and constant."""
    if book.mode is BookMode.CLASSIC:
        return list(entry.keys), entry.constant
    unchanged = derive_aliases(entry.keys)[0] == entry.aliases
    return (list(entry.keys) if unchanged else list(entry.aliases)), entry.canon


def _uids(entries: Sequence[EntryDraft]) -> list[int]:
    taken: set[int] = set()
    wanted: list[int | None] = []
    for entry in entries:
        raw = entry.extensions.get("uid")
        uid = raw if isinstance(raw, int) and not isinstance(raw, bool) else -1
        if 0 <= uid <= _MAX_UID and uid not in taken:
            taken.add(uid)
            wanted.append(uid)
        else:
            wanted.append(None)
    free = (n for n in range(_MAX_UID + 1) if n not in taken)
    return [uid if uid is not None else next(free) for uid in wanted]


def _st_entry(book: BookDraft, entry: EntryDraft, uid: int, index: int) -> dict[str, Any]:
    keys, constant = _keys_and_constant(book, entry)
    order, priority = _order_and_priority(entry)
    out: dict[str, Any] = {
        "uid": uid,
        "key": keys,
        "keysecondary": list(entry.secondary_keys),
        "comment": entry.title,
        "content": join_decorators(entry.decorators, entry.lore),
        "constant": constant,
        "selective": entry.selective,
        "selectiveLogic": entry.selective_logic,
        "order": order,
        "position": 0,
        "disable": not entry.enabled,
        "displayIndex": index,
        "probability": entry.probability,
        "caseSensitive": entry.case_sensitive,
        "matchWholeWords": entry.whole_words,
        "scanDepth": entry.scan_depth,
        "role": ROLES.index(entry.role),
    }
    if entry.probability != 100:
        out["useProbability"] = True
    if priority is not None:
        out["priority"] = priority  # ST has no priority; kept so classic books survive
    out.update({k: v for k, v in entry.extensions.items() if k != "uid"})
    if entry.comment:
        out[MARKER] = {"comment": entry.comment}
    return out


def to_sillytavern(book: BookDraft, entries: Sequence[EntryDraft]) -> dict[str, Any]:
    uids = _uids(entries)
    body: dict[str, Any] = {
        "entries": {
            str(uid): _st_entry(book, entry, uid, i)
            for i, (uid, entry) in enumerate(zip(uids, entries, strict=True))
        },
        "name": book.title,
    }
    if book.description:
        body["description"] = book.description
    body.update({k: v for k, v in book.extensions.items() if k not in ("entries", "name")})
    if book.settings:
        body[MARKER] = {"settings": dict(book.settings)}
    return body


def _card_entry(book: BookDraft, entry: EntryDraft, uid: int, index: int) -> dict[str, Any]:
    keys, constant = _keys_and_constant(book, entry)
    order, priority = _order_and_priority(entry)
    ext: dict[str, Any] = {
        "display_index": index,
        "selectiveLogic": entry.selective_logic,
        "probability": entry.probability,
        "useProbability": True,
        "scan_depth": entry.scan_depth,
        "case_sensitive": entry.case_sensitive,
        "match_whole_words": entry.whole_words,
        "role": ROLES.index(entry.role),
    }
    top: dict[str, Any] = {}
    for key, value in entry.extensions.items():
        if key == "uid":
            continue
        if key == CARD_NS and isinstance(value, dict):
            top.update(value)
        else:
            ext[ST_TO_CARD_EXT.get(key, key)] = value
    if entry.comment:
        ext[MARKER] = {"comment": entry.comment}
    out: dict[str, Any] = {
        "keys": keys,
        "content": join_decorators(entry.decorators, entry.lore),
        "extensions": ext,
        "enabled": entry.enabled,
        "insertion_order": order,
        "use_regex": True,
        "constant": constant,
        "comment": entry.title,
        "selective": entry.selective,
        "secondary_keys": list(entry.secondary_keys),
    }
    if priority is not None:
        out["priority"] = priority
    if "uid" in entry.extensions:
        out["id"] = uid
    position = ext.get("position")
    if isinstance(position, int) and not isinstance(position, bool):
        out["position"] = "before_char" if position == 0 else "after_char"
    if entry.case_sensitive is not None:
        out["case_sensitive"] = entry.case_sensitive
    out.update(top)
    return out


def to_ccv3(book: BookDraft, entries: Sequence[EntryDraft]) -> dict[str, Any]:
    uids = _uids(entries)
    ext = {k: v for k, v in book.extensions.items() if k != CARD_NS}
    data: dict[str, Any] = {"name": book.title, "description": book.description}
    rest = dict(book.settings)
    for name in ("scan_depth", "token_budget"):
        if isinstance(rest.get(name), int):
            data[name] = rest.pop(name)
    for name in ("recursive_scanning", "recursive"):  # the old name too (migration 0003)
        if isinstance(rest.get(name), bool):
            data["recursive_scanning"] = rest.pop(name)
            break
    if rest:  # settings CCv3 has no field for ride in our marker (read back on import)
        ext[MARKER] = {"settings": rest}
    data["extensions"] = ext
    data["entries"] = [
        _card_entry(book, entry, uid, i)
        for i, (uid, entry) in enumerate(zip(uids, entries, strict=True))
    ]
    card_top = book.extensions.get(CARD_NS)
    if isinstance(card_top, dict):
        data.update({k: v for k, v in card_top.items() if k not in ("entries", "extensions")})
    return {"spec": "lorebook_v3", "data": data}


def export_json(book: BookDraft, entries: Sequence[EntryDraft], fmt: str) -> bytes:
    if fmt == "sillytavern":
        body = to_sillytavern(book, entries)
    elif fmt == "ccv3":
        body = to_ccv3(book, entries)
    else:
        raise InvalidInput(
            f"export format must be 'sillytavern' or 'ccv3'; got {fmt!r}.", field="format"
        )
    return json.dumps(body, ensure_ascii=False, indent=2).encode("utf-8")
