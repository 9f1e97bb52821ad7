"""A brute-force ``VectorIndex`` in numpy: the oracle the FAISS adapter is tested against, and
the index unit tests of the use cases run on (no FAISS needed)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from worldbook.adapters.language_correction import LanguageCorrection
from worldbook.core.embed_text import best_chunk_scores, group_rows
from worldbook.core.query import DEFAULT_COMBINATION, QueryCombination, combine_scores
from worldbook.core.types import SemanticHit
from worldbook.ports import BookVectors, IndexedEntries, VectorLoader, Vectors


class BruteForceIndex:
    """Scores every stored row against every query with a matrix product (no caching).

    With a language ``correction`` it corrects exactly as :class:`FaissIndex` does: queries
    projected, each book's rows projected and centred per entry language (``languages``)."""

    def __init__(
        self,
        loader: VectorLoader,
        *,
        combination: QueryCombination = DEFAULT_COMBINATION,
        correction: LanguageCorrection | None = None,
        languages: Callable[[str], Mapping[str, str]] | None = None,
    ) -> None:
        self._loader = loader
        self._combination = combination
        self._correction = correction
        self._languages = languages
        self.invalidated: list[str] = []

    def search(self, book_ids: Sequence[str], queries: Vectors, k: int) -> list[SemanticHit]:
        if self._correction is not None:
            queries = self._correction.queries(queries)
        found: list[tuple[int, str, list[str], npt.NDArray[np.int64], Vectors]] = []
        for position, book_id in enumerate(dict.fromkeys(book_ids)):
            ids, matrix, _ = self._load(book_id)
            if ids:
                order, entries, starts = group_rows(ids)
                rows = self._rows(book_id, matrix[order], [ids[i] for i in order])
                scores = np.asarray((rows @ queries.T).T, dtype=np.float32)
                found.append((position, book_id, entries, starts, scores))  # (messages, rows)
        if not found:
            return []
        combined = combine_scores(
            np.concatenate([scores for *_, scores in found], axis=1), self._combination
        )
        hits: list[tuple[float, int, str, str]] = []
        offset = 0
        for position, book_id, entries, starts, scores in found:
            width = scores.shape[1]
            best = best_chunk_scores(combined[offset : offset + width], starts)
            offset += width
            hits += [(float(s), position, e, book_id) for s, e in zip(best, entries, strict=True)]
        hits.sort(key=lambda h: (-h[0], h[1], h[2]))
        return [SemanticHit(book_id=b, entry_id=e, score=s) for s, _, e, b in hits[:k]]

    def _rows(self, book_id: str, rows: Vectors, row_entries: list[str]) -> Vectors:
        if self._correction is None:
            return rows
        languages = self._languages(book_id) if self._languages is not None else {}
        return self._correction.rows(rows, [languages.get(e, "") for e in row_entries])

    def invalidate(self, book_id: str) -> None:
        self.invalidated.append(book_id)

    def indexed_entries(self, book_id: str) -> IndexedEntries:
        ids, _, hashes = self._load(book_id)
        found = dict(zip(ids, hashes or [""] * len(ids), strict=True))
        # Nothing is cached: the same vectors give the same build number (a view built from
        # these flags stays cached until they change).
        return IndexedEntries(found, hash(frozenset(found.items())))

    def _load(self, book_id: str) -> BookVectors:
        return BookVectors(*self._loader(book_id))
