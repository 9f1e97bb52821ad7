"""The selection under construction, shared by the steps of :mod:`worldbook.core.selection`
and :mod:`worldbook.core.per_turn`: what went in so far and one trace record per entry."""

from __future__ import annotations

from dataclasses import dataclass, field

from worldbook.core.types import (
    Decision,
    EntryRef,
    IndexLine,
    InjectedEntry,
    LoreBook,
    LoreEntry,
    TraceRecord,
)


def ref_of(entry: LoreEntry, book: LoreBook) -> EntryRef:
    return EntryRef(entry.id, book.id, entry.title, entry.tokens, book.character)


@dataclass
class SelectionDraft:
    """The selection under construction."""

    trace: dict[tuple[str, str], TraceRecord] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    canon: list[InjectedEntry] = field(default_factory=list)
    canon_over: list[EntryRef] = field(default_factory=list)
    whole_books: list[str] = field(default_factory=list)
    injected: list[InjectedEntry] = field(default_factory=list)
    index: list[IndexLine] = field(default_factory=list)
    tokenizer_id: str = ""  # read once: adapters may build it on every access

    def record(self, entry_id: str, book_id: str, title: str, decision: Decision, why: str) -> None:
        # Keyed by entry, so a later decision (e.g. linked after ranked-out) replaces the earlier.
        self.trace[(book_id, entry_id)] = TraceRecord(entry_id, book_id, title, decision, why)
