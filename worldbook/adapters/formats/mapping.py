"""Source entries → worldbook drafts, fixing what can be fixed and reporting every change.

Rules (DESIGN §6, docs/design/import-export.md): world mode turns activation keys into aliases (and
keeps them as keys), constant into canon, and skips lore under 20 characters (wide characters count
twice); classic mode keeps keys as triggers and accepts 1–20,000 characters. Either way: titles are
shortened to 100 or rebuilt when under 2, aliases are deduplicated and cut to 50 × 120,
whitespace-only keys are dropped, lore over 20,000 is split into "Title (1)", "Title (2)", NUL
characters are removed — and each of these lands in ``warnings`` naming the entry.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field, fields
from pathlib import PurePath
from typing import Any

from worldbook.adapters.formats import limits
from worldbook.adapters.formats.decorators import split_decorators
from worldbook.adapters.formats.source import ORDER_MIRROR, SourceBook, SourceEntry
from worldbook.core import entry_titles
from worldbook.core.drafts import ENTRY_FIELDS, BookDraft, EntryDraft
from worldbook.core.limits import weighted_length
from worldbook.core.types import BookMode

MARKER = "worldbook"  # extension key our exporters write (the display comment, book settings)
_REGEX_KEY = re.compile(r"^/.+/[a-z]*$", re.S)
_SEPARATORS = ("\n\n", "\n", "。", ". ", "! ", "? ", " ")


@dataclass(slots=True)
class ImportedBook:
    """What ``parse_book`` returns; nothing here has been stored yet."""

    format: str
    book: BookDraft
    entries: list[EntryDraft] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: int = 0


def weighted_len(text: str, enough: int | None = None) -> int:
    """Length for the minimums: East Asian wide/full-width characters count two (DESIGN §6).

    With ``enough``, counting may stop once that much is reached (a minimum check needs no more).
    """
    if enough is not None and len(text) >= enough:
        return len(text)  # every character counts at least one
    return weighted_length(text)


def shorten(text: str, limit: int) -> str:
    """Cut to ``limit`` characters at a word boundary when one is near, ending with '…'."""
    return entry_titles.shorten(text, limit, trailing=None)


def derive_aliases(keys: list[str]) -> tuple[list[str], list[str]]:
    """Aliases from activation keys, and a note for each key left out or cut (DESIGN §6)."""
    aliases: list[str] = []
    notes: list[str] = []
    seen: set[str] = set()
    for key in keys:
        alias = " ".join(key.split())
        if not alias:
            continue
        if _REGEX_KEY.match(alias):
            notes.append(f"regex key {alias!r} kept as a key only, not as an alias")
            continue
        if len(alias) > limits.ALIAS_MAX_CHARS:
            notes.append(f"key longer than {limits.ALIAS_MAX_CHARS} characters kept as a key only")
            continue
        if alias.casefold() in seen:
            continue
        seen.add(alias.casefold())
        aliases.append(alias)
    if len(aliases) > limits.ALIASES_MAX:
        notes.append(f"{len(aliases)} aliases cut to {limits.ALIASES_MAX}; the rest stay keys only")
        aliases = aliases[: limits.ALIASES_MAX]
    return aliases, notes


def _strip_nul(value: Any) -> tuple[Any, int]:
    """``value`` with NUL characters removed from every string in it, and how many went."""
    if isinstance(value, str):
        return value.replace("\x00", ""), value.count("\x00")
    if isinstance(value, list):
        pairs = [_strip_nul(item) for item in value]
        return [p[0] for p in pairs], sum(p[1] for p in pairs)
    if isinstance(value, dict):
        out, total = {}, 0
        for key, item in value.items():
            clean_key, n_key = _strip_nul(key)
            clean_item, n_item = _strip_nul(item)
            out[clean_key] = clean_item
            total += n_key + n_item
        return out, total
    return value, 0


def _opening_words(lore: str) -> str:
    line = next((ln.strip() for ln in lore.splitlines() if ln.strip()), "")
    return shorten(" ".join(line.split()), 60)


def _title(entry: SourceEntry, lore: str, number: int, notes: list[str]) -> str:
    hint = " ".join(entry.title_hint.split())
    if weighted_len(hint, limits.TITLE_MIN) >= limits.TITLE_MIN:
        title = hint
    else:
        if hint:
            notes.append(f"title {hint!r} is under {limits.TITLE_MIN} characters")
        key = next((" ".join(k.split()) for k in entry.keys if k.strip()), "")
        words = _opening_words(lore)
        if weighted_len(key, limits.TITLE_MIN) >= limits.TITLE_MIN and not _REGEX_KEY.match(key):
            title, source = key, "its first key"
        elif weighted_len(words, limits.TITLE_MIN) >= limits.TITLE_MIN:
            title, source = words, "the opening words of its lore"
        else:
            title, source = f"{hint or 'Entry'} {number}".strip(), "its position"
        notes.append(f"no usable title; named after {source}")
    if len(title) > limits.TITLE_MAX:
        notes.append(f"title shortened from {len(title)} to {limits.TITLE_MAX} characters")
        title = shorten(title, limits.TITLE_MAX)
    return title


def split_lore(lore: str, size: int = limits.LORE_MAX) -> list[str]:
    """Parts of at most ``size`` characters, cut at paragraph/line/sentence/word ends when near;
    ``"".join(parts) == lore``. Parts are roughly equal, so none falls under the minimum."""
    parts: list[str] = []
    start = 0
    while len(lore) - start > size:
        left = len(lore) - start
        ideal = start + math.ceil(left / math.ceil(left / size))
        floor = start + (ideal - start) // 2
        cut = ideal
        for sep in _SEPARATORS:
            found = lore.rfind(sep, floor, ideal)
            if found != -1:
                cut = found + len(sep)
                break
        parts.append(lore[start:cut])
        start = cut
    parts.append(lore[start:])
    return parts


def to_worldbook_order(source_order: int) -> int:
    return ORDER_MIRROR - source_order


to_source_order = to_worldbook_order  # the mirror is its own inverse


def _cleaned(source: SourceEntry, notes: list[str]) -> SourceEntry:
    """A copy with NUL characters removed, the exporter's comment restored and blank keys
    dropped, each change noted."""
    fields = [
        source.title_hint,
        source.comment,
        source.content,
        source.keys,
        source.secondary_keys,
        source.extensions,
    ]
    cleaned, removed = _strip_nul(fields)
    if removed:
        notes.append(f"removed {removed} NUL character(s)")
    out = copy.copy(source)
    out.title_hint, out.comment, out.content, out.keys, out.secondary_keys, out.extensions = cleaned
    marker = out.extensions.pop(MARKER, None)
    if isinstance(marker, dict) and isinstance(marker.get("comment"), str):
        out.comment = marker["comment"]
    blank = sum(1 for k in out.keys + out.secondary_keys if not k.strip())
    if blank:
        notes.append(f"dropped {blank} empty or whitespace-only key(s)")
        out.keys = [k for k in out.keys if k.strip()]
        out.secondary_keys = [k for k in out.secondary_keys if k.strip()]
    return out


def map_entry(
    source: SourceEntry, mode: BookMode, number: int
) -> tuple[list[EntryDraft], list[str]]:
    """Drafts for one source entry (several when the lore is split; none when skipped).

    World and hybrid books need world-length lore and get aliases from the keys and canon
    from constant; classic books keep keys as triggers only. Order is mirrored (see
    :data:`ORDER_MIRROR`); priority is the source's, else its order (SillyTavern keeps the
    highest order first under the budget, CCv3 "MAY follow insertion_order").
    """
    notes = list(source.notes)
    source = _cleaned(source, notes)
    world = mode is not BookMode.CLASSIC
    decorators, lore = split_decorators(source.content)
    size = weighted_len(lore.strip(), enough=limits.LORE_MIN_WORLD)
    minimum = limits.LORE_MIN_WORLD if world else limits.LORE_MIN_CLASSIC
    title = _title(source, lore, number, notes)
    if size < minimum:
        notes.append(
            f"skipped: lore is {size} characters, under the {minimum}-character minimum"
            + (" for world books (wide characters count as two)" if world else "")
        )
        return [], [f"{source.label} {title!r}: {n}" for n in notes]
    hint = source.title_hint
    if not source.comment and hint.strip() and " ".join(hint.split()) != title:
        source.comment = hint  # the original name was changed: keep it where nothing is lost
    aliases: list[str] = []
    if world:
        aliases, alias_notes = derive_aliases(source.keys)
        notes.extend(alias_notes)
    parts = split_lore(lore)
    if len(parts) > 1:
        notes.append(
            f"lore of {len(lore):,} characters split into {len(parts)} entries "
            f"of at most {limits.LORE_MAX:,}"
        )
    drafts = [
        _draft(source, title, part, index, len(parts), decorators, aliases, world)
        for index, part in enumerate(parts, 1)
    ]
    return drafts, [f"{source.label} {title!r}: {n}" for n in notes]


_AS_IS = tuple(
    f.name
    for f in fields(SourceEntry)
    if f.name in ENTRY_FIELDS
    and f.name not in {"keys", "secondary_keys", "order", "priority", "extensions"}
)
"""The fields an entry takes from its source as they are: every field both types have (same
name, same meaning, immutable values) but the ones :func:`_draft` copies or converts."""


def _draft(
    source: SourceEntry,
    title: str,
    part: str,
    index: int,
    parts: int,
    decorators: list[str],
    aliases: list[str],
    world: bool,
) -> EntryDraft:
    """One (part of an) entry."""
    if parts > 1:
        suffix = f" ({index})"
        title = shorten(title, limits.TITLE_MAX - len(suffix)) + suffix
    extensions = copy.deepcopy(source.extensions)
    if index > 1:
        extensions.pop("uid", None)  # a uid names one entry; the exporter assigns new ones
    return EntryDraft(
        title=title,
        lore=part,
        aliases=list(aliases),
        canon=source.constant if world else False,
        keys=list(source.keys),
        secondary_keys=list(source.secondary_keys),
        order=to_worldbook_order(source.order),
        priority=source.order if source.priority is None else source.priority,
        decorators=list(decorators),
        extensions=extensions,
        **{name: getattr(source, name) for name in _AS_IS},
    )


_SETTING_RANGES = {"scan_depth": (0, 100), "token_budget": (100, 32_000)}  # DESIGN §3


def map_book(source: SourceBook, mode: BookMode, filename: str | None) -> ImportedBook:
    warnings = list(source.notes)
    extensions, removed = _strip_nul(source.extensions)
    if removed:
        warnings.append(f"book: removed {removed} NUL character(s) from its extra fields")
    marker = extensions.pop(MARKER, None)
    settings: dict[str, Any] = dict(source.settings)
    if isinstance(marker, dict) and isinstance(marker.get("settings"), dict):
        settings = {**marker["settings"], **settings}
    if "recursive" in settings and "recursive_scanning" not in settings:
        settings["recursive_scanning"] = settings.pop("recursive")  # the old name (0003)
    for name, (lo, hi) in _SETTING_RANGES.items():
        value = settings.get(name)
        if isinstance(value, int) and not lo <= value <= hi:
            settings[name] = min(max(value, lo), hi)
            warnings.append(f"book: {name} {value} moved into {lo}–{hi} (DESIGN §3)")
    title = " ".join(source.title.replace("\x00", "").split())
    if not title:
        title = PurePath(filename).stem if filename else ""
        title = " ".join(title.split()) or "Imported book"
    if len(title) > limits.BOOK_TITLE_MAX:
        warnings.append(f"book: title shortened to {limits.BOOK_TITLE_MAX} characters")
        title = shorten(title, limits.BOOK_TITLE_MAX)
    description = source.description.replace("\x00", "")
    if len(description) > limits.BOOK_DESCRIPTION_MAX:
        warnings.append(
            f"book: description shortened to {limits.BOOK_DESCRIPTION_MAX:,} characters"
        )
        description = shorten(description, limits.BOOK_DESCRIPTION_MAX)
    book = BookDraft(
        title=title, description=description, mode=mode, settings=settings, extensions=extensions
    )
    result = ImportedBook(
        format=source.format, book=book, warnings=warnings, skipped=source.skipped
    )
    for number, entry in enumerate(source.entries, 1):
        drafts, notes = map_entry(entry, mode, number)
        result.warnings.extend(notes)
        result.entries.extend(drafts)
        if not drafts:
            result.skipped += 1
    return result
