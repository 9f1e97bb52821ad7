"""Glosses of the in-memory store (ADR 0023; ``ports.GlossStore``), with the SQL store's rules.

The rows live in ``EntryTable._glosses`` so that dropping an entry (deletion, purge, the living
world's trash) drops its glosses as the SQL foreign key's ON DELETE CASCADE does, and a living
write that fails puts them back (``WriteTable._transaction``). ``copy_book`` copies none.
"""

from __future__ import annotations

from collections.abc import Sequence

from worldbook.core.glosses import Gloss
from worldbook.core.store_rules import check_gloss_languages, unique_glosses
from worldbook.testing.memory_entries import EntryTable


class GlossTable(EntryTable):
    """Glosses by (entry id, language); a gloss whose hash is not its entry's is never read."""

    def save_glosses(self, book_id: str, glosses: Sequence[Gloss]) -> int:
        wanted = unique_glosses(glosses)
        saved = 0
        with self._lock:
            if book_id not in self._books:
                return 0
            for key, gloss in sorted(wanted.items()):
                entry = self._entries.get(gloss.entry_id)
                if (
                    entry is not None
                    and entry.book_id == book_id
                    and entry.content_hash == gloss.content_hash
                ):
                    self._glosses[key] = gloss
                    saved += 1
        return saved

    def book_glosses(self, book_id: str) -> list[Gloss]:
        with self._lock:
            place = {e.id: (i, e.content_hash) for i, e in enumerate(self._book_entries(book_id))}
            found = [
                (place[gloss.entry_id][0], gloss.language, gloss)
                for gloss in self._glosses.values()
                if gloss.entry_id in place and place[gloss.entry_id][1] == gloss.content_hash
            ]
        return [gloss for _, _, gloss in sorted(found, key=lambda f: (f[0], f[1]))]

    def delete_glosses(self, book_id: str, languages: Sequence[str] | None = None) -> int:
        wanted = check_gloss_languages(languages)
        with self._lock:
            in_book = {e.id for e in self._book_entries(book_id)}
            doomed = [
                key
                for key in self._glosses
                if key[0] in in_book and (wanted is None or key[1] in wanted)
            ]
            for key in doomed:
                del self._glosses[key]
            return len(doomed)
