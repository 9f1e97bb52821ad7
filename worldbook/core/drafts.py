"""Plain drafts of books and entries: what importers produce, what the store validates and writes.

Field names here are the canonical names used by the store's tables, the HTTP schemas and the
importers/exporters. Classic-mode fields (DESIGN §3) are kept even in world mode so a book can be
switched or exported without loss; ``extensions`` keeps fields from other tools verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from worldbook.core.types import BookMode, Role, Visibility

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
    priority: int = 0
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
    settings: JSONDict = field(default_factory=dict)  # classic: scan_depth, token_budget, recursive
    extensions: JSONDict = field(default_factory=dict)
