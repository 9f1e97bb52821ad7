"""The gloss views: the readers' languages' names and gists of entries, searched on the turn
(ADR 0023).

Each reader language has its own vector index over the gloss vectors stored under
:func:`worldbook.core.glosses.gloss_model_id` (written off the turn by
:mod:`worldbook.service.glosses`), built from the database like the other views. A turn whose
conversation is in one of a book's reader languages searches that language's index with the
primary view's query vectors (already embedded for the turn: no model call) and lifts each entry
to its gloss score minus the margin (:func:`worldbook.core.glosses.lift_by_glosses`). Books
without reader languages, and conversations in another language, cost nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from worldbook.core.fusion import ranked
from worldbook.core.glosses import lift_by_glosses
from worldbook.core.types import SemanticHit
from worldbook.errors import ServiceUnavailable
from worldbook.ports import VectorIndex, Vectors

logger = logging.getLogger(__name__)


class OneLanguage(Mapping[str, str]):
    """Every entry's language is ``language``: the rows of a gloss index are all in the
    language it serves (for the per-language centring of the language correction)."""

    def __init__(self, language: str) -> None:
        self._language = language

    def __getitem__(self, key: str) -> str:
        return self._language

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


@dataclass
class GlossViews:
    """One lazily made vector index per reader language, and the margin of ADR 0023.

    ``make_index(language)`` builds the index over that language's gloss vectors.
    """

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
        """The book's gloss vectors changed (or its entries' vectors did)."""
        with self._lock:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.invalidate(book_id)

    def lifted(
        self,
        hits: Sequence[SemanticHit],
        vectors: Vectors,
        language: str,
        book_ids: Sequence[str],
        k: int,
    ) -> list[SemanticHit]:
        """``hits`` (the primary's, best first) with the glosses in ``language`` of
        ``book_ids`` (the books that have it as a reader language) lifting entries, best
        ``k``; the hits unchanged when there are no such books."""
        if not book_ids:
            return list(hits)
        try:
            found = self.index(language).search(list(book_ids), vectors, k)
        except ServiceUnavailable as exc:
            # A generated view only helps; the author's own text still answers the turn.
            logger.warning("gloss view %s unavailable: %s", language, exc)
            return list(hits)
        if not found:
            return list(hits)
        scores = {(h.book_id, h.entry_id): h.score for h in hits}
        glossed = {(h.book_id, h.entry_id): h.score for h in found}
        lifted = lift_by_glosses(scores, glossed, self.margin)
        return [SemanticHit(book_id=b, entry_id=e, score=s) for (b, e), s in ranked(lifted, k)]
