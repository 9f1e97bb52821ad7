"""SillyTavern World Info JSON (formats.md §1): ``{"entries": {"<uid>": {...}}, ...}``.

Reads old and new field sets (ST-2024 ``newWorldInfoEntryDefinition`` defaults apply to missing
fields), ``entries`` as an object or an array, and third-party variants (``enabled`` instead of
``disable``, ``keys``/``secondary_keys``). Display order is ``displayIndex``, then ``uid``
(ST-2024 world-info.js ~L1805). The same entry reader serves character-book entries after their
``extensions`` are renamed to SillyTavern names (:data:`ST_TO_CARD_EXT`, formats.md §1.4).
"""

from __future__ import annotations

import math
from typing import Any

from worldbook.adapters.formats.source import (
    ORDER_RANGE,
    Fields,
    SourceBook,
    SourceEntry,
    check_count,
    kind,
    require_object,
    titled_book,
)
from worldbook.errors import InvalidInput

# SillyTavern entry field → character-book entry ``extensions`` key (ST-2024 characters.js L450).
ST_TO_CARD_EXT: dict[str, str] = {
    "position": "position",
    "excludeRecursion": "exclude_recursion",
    "preventRecursion": "prevent_recursion",
    "delayUntilRecursion": "delay_until_recursion",
    "displayIndex": "display_index",
    "probability": "probability",
    "useProbability": "useProbability",
    "depth": "depth",
    "selectiveLogic": "selectiveLogic",
    "group": "group",
    "groupOverride": "group_override",
    "groupWeight": "group_weight",
    "scanDepth": "scan_depth",
    "caseSensitive": "case_sensitive",
    "matchWholeWords": "match_whole_words",
    "useGroupScoring": "use_group_scoring",
    "automationId": "automation_id",
    "role": "role",
    "vectorized": "vectorized",
    "sticky": "sticky",
    "cooldown": "cooldown",
    "delay": "delay",
    "outletName": "outlet_name",
    "ignoreBudget": "ignore_budget",
    "triggers": "triggers",
    "matchPersonaDescription": "match_persona_description",
    "matchCharacterDescription": "match_character_description",
    "matchCharacterPersonality": "match_character_personality",
    "matchCharacterDepthPrompt": "match_character_depth_prompt",
    "matchScenario": "match_scenario",
    "matchCreatorNotes": "match_creator_notes",
}
CARD_EXT_TO_ST = {card: st for st, card in ST_TO_CARD_EXT.items()}
_LAST = math.inf


def _number(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def read_entry(
    obj: object, where: str, label: str
) -> tuple[SourceEntry, float | None, float | None]:
    """One entry with SillyTavern field names → (entry, displayIndex, uid) (None: absent)."""
    f = Fields(obj, where)
    raw = f.obj
    e = SourceEntry(label=label)
    e.title_hint = f.string("comment")
    e.content = f.string("content")
    e.keys = f.strings("key") if "key" in raw or "keys" not in raw else f.strings("keys")
    second = "keysecondary" if "keysecondary" in raw or "secondary_keys" not in raw else None
    e.secondary_keys = f.strings(second or "secondary_keys")
    e.constant = f.boolean("constant", False)
    e.selective = f.boolean("selective", True)
    e.selective_logic = f.integer("selectiveLogic", 0, 0, 3)
    e.order = f.integer("order", 100, *ORDER_RANGE)
    if f.has("priority"):
        e.priority = f.integer("priority", 0)  # not SillyTavern's; our ST export writes it
    if "disable" in raw:
        e.enabled = not f.boolean("disable", False)
    elif "enabled" in raw:
        e.enabled = f.boolean("enabled", True)
    e.whole_words = f.opt_boolean("matchWholeWords")
    e.case_sensitive = f.opt_boolean("caseSensitive")
    e.scan_depth = f.opt_integer("scanDepth", 0, 1000)
    e.role = f.role("role")
    probability = f.integer("probability", 100, 0, 100)
    if raw.get("useProbability") is False:
        f.used.discard("probability")  # ignored by ST; the raw value rides in extensions
    else:
        e.probability = probability
        if raw.get("useProbability") is True:
            f.used.add("useProbability")  # export writes it back from `probability`
    uid, display = _number(raw.get("uid")), _number(raw.get("displayIndex"))
    if display is not None:
        f.used.add("displayIndex")  # represented by the entry's position in the list
    elif "displayIndex" in raw and raw["displayIndex"] is None:
        f.used.add("displayIndex")
    e.extensions = f.rest()
    e.notes.extend(f.notes)
    return e, display, uid


def read_book(doc: dict[str, Any], fmt: str = "sillytavern") -> SourceBook:
    """A SillyTavern World Info file (already parsed and recognised by ``detect``)."""
    f = Fields(doc, "book")
    book = titled_book(f, fmt, "name")
    entries = doc.get("entries")
    if isinstance(entries, dict):
        items = list(entries.items())
    elif isinstance(entries, list):
        items = [(str(i), item) for i, item in enumerate(entries)]
    else:
        raise InvalidInput(
            f"entries must be an object keyed by uid or an array; got {kind(entries)}.",
            field="entries",
        )
    f.used.add("entries")
    check_count(len(items), "entries")
    keyed: list[tuple[tuple[float, float, int], SourceEntry]] = []
    for position, (key, item) in enumerate(items):
        where = f'entries["{key}"]' if isinstance(entries, dict) else f"entries[{key}]"
        require_object(item, where)
        entry, display, uid = read_entry(item, where, where)
        if uid is None and key.isdigit():  # uid missing: ST files are keyed by it
            uid = float(key)
        uid_key = uid if uid is not None else _LAST
        keyed.append(((display if display is not None else uid_key, uid_key, position), entry))
    keyed.sort(key=lambda pair: pair[0])
    book.entries = [entry for _, entry in keyed]
    book.extensions = f.rest()
    return book
