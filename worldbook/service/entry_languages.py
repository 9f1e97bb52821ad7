"""The language of each entry's text, for the per-language centring of a book's index rows
(ADR 0003, :mod:`worldbook.adapters.language_correction`).

Computed from the text (:func:`worldbook.core.language_id.detect_language`) once per entry text:
results are cached by the entry's content hash, so rebuilding a book's index after one edit
guesses one language, and nothing is stored in the database.
"""

from __future__ import annotations

from worldbook.core.language_id import LANGUAGE_ID_VERSION, detect_language
from worldbook.core.records import EntryQuery
from worldbook.ports import Store
from worldbook.runtime.lru import LRU

HEAD_CHARS = 1000
"""Characters of an entry's text the guess reads: the language shows in its head, lore can be
20,000 characters long, and the guess costs ~1 µs a character (once per entry text)."""


def entry_language(title: str, lore: str) -> str:
    """The language of an entry (its title and the head of its lore)."""
    return detect_language(f"{title}\n{lore}"[:HEAD_CHARS])


class EntryLanguages:
    """``languages(book_id) -> {entry_id: language}`` over the store, cached by content hash.

    Args:
        store: where the entries are read (only when a book's index is built).
        max_cached: how many entry texts' languages stay cached (LRU; a few bytes each).
    """

    def __init__(self, store: Store, *, max_cached: int = 200_000) -> None:
        self._store = store
        self._cache: LRU[str, str] = LRU(max_cached)

    def __call__(self, book_id: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for record in self._store.list_entries(book_id, EntryQuery(enabled=True)):
            key = f"{LANGUAGE_ID_VERSION}:{record.content_hash}"
            language = self._cache.get(key)
            if language is None:
                language = entry_language(record.title, record.lore)
                self._cache.put(key, language)
            found[record.id] = language
        return found
