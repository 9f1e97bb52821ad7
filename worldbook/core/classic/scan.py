"""Where each key of one book was found this turn: in which chat message, in whose content.

Messages are scanned newest first and only as deep as some entry of the book looks (deeper on
demand for minimum activations); each key remembers its newest message, which is all a window
of the last N messages needs (classic.md §1 rules 1–3, 11: a key never spans two messages).
Recursed content is scanned entry by entry and each key remembers the first entry it was found
in (rule 22).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from worldbook.core.classic.compiled import CompiledBook, EntrySpec, KeyRef
from worldbook.core.classic.keys import RegexClock
from worldbook.core.classic.result import KeyHit
from worldbook.core.classic.scanned_text import TextForms


@dataclass(frozen=True, slots=True)
class ContentSource:
    """The activated entry whose content carried a key into recursion."""

    book_id: str
    entry_id: str
    title: str


class BookScan:
    """Key hits of one book in this turn's messages (by age: 0 = newest) and recursed text."""

    __slots__ = ("_clock", "_messages", "_positions", "ages", "book", "recursed", "scanned")

    def __init__(
        self,
        book: CompiledBook,
        messages: Sequence[TextForms],
        positions: Sequence[int],
        clock: RegexClock,
    ) -> None:
        self.book = book
        self._messages = messages
        self._positions = positions
        self._clock = clock
        self.ages: dict[int, int] = {}
        self.recursed: dict[int, ContentSource] = {}
        self.scanned = 0

    def scan_to(self, depth: int) -> list[int]:
        """Scan messages up to ``depth`` (newest first); the key ids found for the first time."""
        new: list[int] = []
        limit = min(depth, len(self._messages))
        while self.scanned < limit:
            age = self.scanned
            for kid in self.book.message_hits(self._messages[age], self._clock):
                if kid not in self.ages:
                    self.ages[kid] = age
                    new.append(kid)
            self.scanned += 1
        return new

    def add_content(
        self, source_book: CompiledBook, index: int, source: ContentSource
    ) -> list[int]:
        """Scan one activated entry's content for this book's keys; the new key ids."""
        forms = source_book.content_forms(index)
        new: list[int] = []
        for kid in self.book.content_hits(source_book, index, forms, self._clock):
            if kid not in self.recursed:
                self.recursed[kid] = source
                new.append(kid)
        return new

    def hit(self, ref: KeyRef, depth: int, recursion: bool, secondary: bool) -> KeyHit:
        """Where present key ``ref`` was found: its newest message within the last ``depth``
        messages, else the first recursed content that had it."""
        kid, written = ref
        age = self.ages.get(kid)
        if age is not None and age < depth:
            return KeyHit(written, secondary, "message", message=self._positions[age])
        source = self.recursed[kid]
        return KeyHit(
            written,
            secondary,
            "content",
            from_book=source.book_id,
            from_entry=source.entry_id,
            from_title=source.title,
        )

    def present(self, refs: Sequence[KeyRef], depth: int, recursion: bool) -> list[KeyRef]:
        """The keys of ``refs`` found in the last ``depth`` messages or, when ``recursion``, in
        recursed content (the hot path of a turn: plain lookups, no objects)."""
        ages = self.ages
        recursed = self.recursed if recursion else None
        out: list[KeyRef] = []
        for ref in refs:
            age = ages.get(ref[0])
            if (age is not None and age < depth) or (recursed is not None and ref[0] in recursed):
                out.append(ref)
        return out

    def candidates(self, kids: Sequence[int]) -> set[int]:
        """Entries a new hit of these keys may activate."""
        owners = self.book.owners
        out: set[int] = set()
        for kid in kids:
            out.update(owners.get(kid, ()))
        return out

    def window_of(self, spec: EntrySpec, extra: int) -> int:
        """The entry's window this sweep: its depth, widened by ``extra`` for book-depth
        entries during minimum-activation sweeps (SillyTavern's skew, classic.md §2.5)."""
        return spec.depth + extra if spec.depth_from_book else spec.depth
