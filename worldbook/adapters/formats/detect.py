"""Which format a file is in, judged by its content (never by its name; formats.md §3.5).

Order of checks follows SillyTavern's ``importWorldInfo`` (NovelAI, Agnai, Risu first), then the
card and book shapes, then KoboldAI and AI Dungeon. Containers are recognised by their magic
bytes: PNG signature, zip local-file header (CHARX).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worldbook.adapters.formats import cards, draft, png
from worldbook.adapters.formats.jsontext import decode_text, load_json
from worldbook.errors import UnsupportedFormat

SUPPORTED_FORMATS: dict[str, str] = {
    "sillytavern": "SillyTavern World Info JSON",
    "character_book": "Character Card V2 character_book JSON (entries array)",
    "ccv2_json": "Character Card V2 JSON with a character_book",
    "ccv3_json": "Character Card V3 JSON with a character_book",
    "ccv2_png": "Character Card V2 PNG ('chara' chunk)",
    "ccv3_png": "Character Card V3 PNG ('ccv3' chunk, preferred, or 'chara')",
    "ccv3_charx": "Character Card V3 CHARX zip (card.json)",
    "lorebook_v3": 'CCv3 standalone lorebook ({"spec": "lorebook_v3"})',
    "novelai_lorebook": "NovelAI .lorebook",
    "novelai_scenario": "NovelAI .scenario (its lorebook)",
    "novelai_story": "NovelAI .story (its lorebook)",
    "novelai_png": "NovelAI lorebook PNG ('naidata' chunk)",
    "agnai": "Agnai memory book",
    "risu": "RisuAI lorebook export",
    "kobold": "KoboldAI story save (worldinfo)",
    "kobold_united": "KoboldAI United story save (worldinfo_v2)",
    "aidungeon": "AI Dungeon world-info array",
    "worldbook_draft": "worldbook draft JSON (what `worldbook generate` and `split` print)",
}
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_CARD_ONLY = ("first_mes", "mes_example", "personality")


@dataclass(frozen=True, slots=True)
class Detected:
    """The format name and the decoded document the matching reader takes."""

    format: str
    doc: Any
    notes: tuple[str, ...] = ()


def unsupported(what: str) -> UnsupportedFormat:
    names = "; ".join(SUPPORTED_FORMATS.values())
    return UnsupportedFormat(f"{what} is in no format worldbook reads. We read: {names}.")


def classify_json(doc: object) -> str:
    """Format name of a parsed JSON document, or UnsupportedFormat."""
    if isinstance(doc, list):
        first = doc[0] if doc else None
        if isinstance(first, dict) and "keys" in first and "entry" in first:
            return "aidungeon"
        raise unsupported("This JSON array")
    if not isinstance(doc, dict):
        raise unsupported("This JSON value")
    spec = doc.get("spec")
    entries = doc.get("entries")
    if "lorebookVersion" in doc:
        return "novelai_lorebook"
    if "scenarioVersion" in doc and isinstance(doc.get("lorebook"), dict):
        return "novelai_scenario"
    if "storyContainerVersion" in doc:
        return "novelai_story"
    if doc.get("kind") == "memory":
        return "agnai"
    if doc.get("type") == "risu":
        return "risu"
    if spec == "lorebook_v3":
        return "lorebook_v3"
    if isinstance(spec, str) and spec.startswith("chara_card_"):
        return cards.card_format(doc, "json")
    if isinstance(entries, dict):
        return "sillytavern"
    if isinstance(entries, list) and draft.is_draft(doc):
        return "worldbook_draft"
    if isinstance(entries, list):
        first = entries[0] if entries else {}
        card_like = isinstance(first, dict) and "key" not in first
        if card_like and any(k in first for k in ("keys", "insertion_order", "secondary_keys")):
            return "character_book"
        return "sillytavern"
    if "worldinfo_v2" in doc:
        return "kobold_united"
    if isinstance(doc.get("worldinfo"), list):
        return "kobold"
    if "name" in doc and any(k in doc for k in _CARD_ONLY):
        return "ccv1_json"
    raise unsupported("This JSON file")


def detect(data: bytes, *, max_bytes: int) -> Detected:
    """Recognise and decode ``data`` (already checked against ``max_bytes`` by the caller)."""
    if png.is_png(data):
        keyword, doc, notes = cards.read_png(data)
        if keyword == "naidata":
            return Detected("novelai_png", doc, tuple(notes))
        fmt = cards.card_format(doc, "png")
        return Detected(fmt, doc, tuple(notes))
    if data.startswith(_ZIP_MAGIC):
        return Detected("ccv3_charx", cards.read_charx(data, max_bytes))
    head = data[:4096].lstrip(b"\xef\xbb\xbf\xff\xfe \t\r\n\x00")
    if head[:1] not in (b"{", b"["):
        raise unsupported("This file (it is not JSON, a PNG card or a CHARX zip)")
    doc = load_json(decode_text(data))
    return Detected(classify_json(doc), doc)


def detect_format(data: bytes, *, max_bytes: int = 20 * 1024 * 1024) -> str:
    """Just the format name (see :data:`SUPPORTED_FORMATS`)."""
    return detect(data, max_bytes=max_bytes).format
