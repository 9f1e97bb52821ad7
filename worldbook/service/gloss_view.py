"""The gloss views: the readers' languages' names and gists of entries, searched on the turn
(ADR 0023).

A reader language has its own vector index over the book's own rows (the primary model's
vectors of each entry) **and** that language's gloss rows (stored under
:func:`worldbook.core.glosses.gloss_model_id`, written off the turn by
:mod:`worldbook.service.glosses`), rebuilt from the database like the other views. Own rows and
gloss rows are scored in one pass, so the centred combination of DESIGN §2 rule 5 measures them
against the same mean and their scores compare; each entry then scores the better of its own
text and its gloss minus the margin (:func:`worldbook.core.glosses.lift_by_glosses`). A turn
whose conversation is in a reader language of one of its books uses that index in place of the
primary's (one pass, not two): books without glosses score exactly as in the primary. Books
without reader languages, and conversations in another language, never reach this module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from worldbook.core.fusion import ranked
from worldbook.core.glosses import gloss_model_id, lift_by_glosses
from worldbook.core.types import SemanticHit
from worldbook.ports import BookVectors, VectorIndex, Vectors

GLOSS_ROW = "gloss:"
"""Prefix of a gloss row's entry id in a gloss index (``:`` never occurs in an entry id)."""


class GlossRowLanguages(Mapping[str, str]):
    """Entry languages for a gloss index: an own row's is its entry's, a gloss row's is the
    language the index serves (for the per-language centring of the language correction)."""

    def __init__(self, entries: Mapping[str, str], language: str) -> None:
        self._entries = entries
        self._language = language

    def __getitem__(self, key: str) -> str:
        if key.startswith(GLOSS_ROW):
            return self._language
        return self._entries[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def gloss_row_languages(
    entry_languages: Callable[[str], Mapping[str, str]] | None, language: str
) -> Callable[[str], GlossRowLanguages]:
    """``languages(book_id)`` of a gloss index (own rows: their entries' languages, from
    ``entry_languages`` when the search corrects per language; gloss rows: ``language``)."""

    def languages(book_id: str) -> GlossRowLanguages:
        own = entry_languages(book_id) if entry_languages is not None else {}
        return GlossRowLanguages(own, language)

    return languages


def gloss_rows_loader(
    load: Callable[[str, str], BookVectors], model_id: str, language: str
) -> Callable[[str], BookVectors]:
    """``loader(book_id)`` of a gloss index: the book's own rows, then its gloss rows of
    ``language`` under :data:`GLOSS_ROW` ids. ``load(book_id, model_id)`` reads the store."""
    stored_as = gloss_model_id(model_id, language)

    def loader(book_id: str) -> BookVectors:
        own = load(book_id, model_id)
        glossed = load(book_id, stored_as)
        if not glossed.entry_ids:
            return own
        vectors = np.concatenate([np.asarray(own.vectors), np.asarray(glossed.vectors)])
        ids = own.entry_ids + [GLOSS_ROW + e for e in glossed.entry_ids]
        hashes = None
        if own.content_hashes is not None and glossed.content_hashes is not None:
            hashes = own.content_hashes + glossed.content_hashes
        return BookVectors(ids, vectors, hashes)

    return loader


@dataclass
class GlossViews:
    """One lazily made index per reader language (:func:`gloss_rows_loader` rows), and the
    margin of ADR 0023. ``make_index(language)`` builds the index of that language."""

    make_index: Callable[[str], VectorIndex]
    margin: float
    _indexes: dict[str, VectorIndex] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def index(self, language: str) -> VectorIndex:
        with self._lock:
            found = self._indexes.get(language)
            if found is None:
                found = self._indexes[language] = self.make_index(language)
            return found

    def invalidate(self, book_id: str) -> None:
        """The book's vectors changed (its own or its glosses)."""
        with self._lock:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.invalidate(book_id)

    def search(
        self, language: str, book_ids: Sequence[str], vectors: Vectors, k: int
    ) -> list[SemanticHit]:
        """The best ``k`` entries of ``book_ids`` for the conversation ``vectors``, each scored
        by its own text or its gloss in ``language`` minus the margin, whichever is higher."""
        # An entry may take two rows of the ranking (its text and its gloss): ask for twice.
        found = self.index(language).search(list(book_ids), vectors, 2 * k)
        own: dict[tuple[str, str], float] = {}
        glossed: dict[tuple[str, str], float] = {}
        for hit in found:
            if hit.entry_id.startswith(GLOSS_ROW):
                glossed[(hit.book_id, hit.entry_id.removeprefix(GLOSS_ROW))] = hit.score
            else:
                own[(hit.book_id, hit.entry_id)] = hit.score
        lifted = lift_by_glosses(own, glossed, self.margin)
        hits = []
        for (book_id, entry_id), score in ranked(lifted, k):
            # The gloss decided where the entry's own text scored less (or was not found).
            gloss = language if own.get((book_id, entry_id)) != score else ""
            hits.append(SemanticHit(book_id=book_id, entry_id=entry_id, score=score, gloss=gloss))
        return hits
