"""Plain drafts of books and entries: what importers produce, what the store validates and writes.

Field names here are the canonical names used by the store's tables, the HTTP schemas and the
importers/exporters. Classic-mode fields (DESIGN §3) are kept even in world mode so a book can be
switched or exported without loss; ``extensions`` keeps fields from other tools verbatim.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from worldbook.core.types import BookMode, Role, Visibility
from worldbook.errors import InvalidInput

JSONDict = dict[str, Any]


@dataclass(slots=True)
class EntryDraft:
    """One entry as written by a user or an importer, before validation."""

    title: str
    lore: str
    aliases: list[str] = field(default_factory=list)
    canon: bool = False
    enabled: bool = True
    comment: str = ""
    # Classic (keyword) mode fields — DESIGN §3, SillyTavern / CCv3 semantics.
    keys: list[str] = field(default_factory=list)
    secondary_keys: list[str] = field(default_factory=list)
    selective: bool = False
    selective_logic: int = 0  # 0 AND_ANY, 1 NOT_ALL, 2 NOT_ANY, 3 AND_ALL (SillyTavern)
    constant: bool = False
    order: int = 100
    priority: int | None = None  # None: the entry's order (classic.md §5 item 5)
    role: Role = "system"
    whole_words: bool | None = None
    case_sensitive: bool | None = None
    probability: int = 100
    scan_depth: int | None = None
    decorators: list[str] = field(default_factory=list)  # raw "@@name value" lines
    extensions: JSONDict = field(default_factory=dict)


@dataclass(slots=True)
class BookDraft:
    """A book's own fields, before validation. Entries travel separately (in list order)."""

    title: str
    description: str = ""
    tags: list[str] = field(default_factory=list)
    visibility: Visibility = Visibility.PRIVATE
    mode: BookMode = BookMode.WORLD
    settings: JSONDict = field(default_factory=dict)  # classic: see core.limits.BOOK_SETTINGS
    extensions: JSONDict = field(default_factory=dict)


ENTRY_FIELDS = frozenset(EntryDraft.__dataclass_fields__)
"""Every field of an entry a person or an importer sets: the one list the store, the API and
the fakes take their field names from."""
ENTRY_LIST_FIELDS = ("aliases", "keys", "secondary_keys", "decorators")
"""The entry fields that hold lists (tuples in records)."""
BOOK_FIELDS = frozenset(BookDraft.__dataclass_fields__)


def check_known_fields(changes: Mapping[str, Any], known: Collection[str], *, kind: str) -> None:
    """Reject an update naming a field the ``kind`` (book, entry) does not have."""
    unknown = sorted(set(changes) - set(known))
    if unknown:
        raise InvalidInput(
            f"unknown {kind} field {unknown[0]!r}; known: {', '.join(sorted(known))}.",
            field=unknown[0],
        )


def entry_values(draft: EntryDraft) -> dict[str, Any]:
    """The draft's fields as a dict, list fields as tuples (the records' form)."""
    values = asdict(draft)
    for name in ENTRY_LIST_FIELDS:
        values[name] = tuple(values[name])
    return values


def norm_tag(tag: str) -> str:
    """A tag as stored and searched: trimmed and case-folded (``River`` finds ``river``)."""
    return tag.strip().casefold()
