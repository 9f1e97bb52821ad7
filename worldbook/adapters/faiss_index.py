"""Exact per-book FAISS indexes, built on demand from stored vectors and cached (LRU).

The database is the source of truth (DESIGN §4): vectors live there with their model id and the
entry's content hash, and the ``loader`` given to :class:`FaissIndex` returns only the current
vectors of the active model for one book. Each book gets an exact inner-product index
(``IndexFlatIP``; on L2-normalised vectors inner product is cosine similarity). Books are small
(≤2,000 entries, a few rows each when lore is chunked), so every row is scored for every message
(FAISS ``compute_distance_subset``: one exact pass, no sort), the messages are combined by
:mod:`worldbook.core.query` over the rows of all the books searched, chunks collapse to their
entry's best score, and books are merged. Keeping every score makes the result exact whatever the
combination (a per-message top-k would miss an entry that is second-best for every message) and
makes ties deterministic. Cached indexes are bounded by a number of books and by bytes, evicting
the least recently used.

With a :class:`~worldbook.adapters.language_correction.LanguageCorrection` (models that ship a
language basis, ADR 0003) the query vectors are projected when a search starts and a
book's rows are projected and centred per entry language when its index is built; the stored
vectors stay raw, and a built index records the correction version it was built with.

Each build records the text hash every entry's vectors were embedded from, so the turn path can
tell an entry edited since (its old vectors are never used, DESIGN §2 rule 6). That is what lets
a served process (``background=True``) keep answering from a book's previous build while one
daemon thread loads and builds the new one after its vectors changed (ADR 0008): no turn
waits for the ≈100 ms a 2,000-entry book costs to load and build. Elsewhere (tests, CLI) a
change of vectors drops the cached index and the next search builds it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from worldbook.adapters.language_correction import LanguageCorrection
from worldbook.core.embed_text import best_chunk_scores, group_rows
from worldbook.core.query import (
    DEFAULT_COMBINATION,
    QueryCombination,
    combine_scores,
    require_messages,
)
from worldbook.core.types import SemanticHit
from worldbook.errors import IndexUnavailable, InvalidInput, WorldbookError
from worldbook.ports import BookVectors, IndexedEntries, VectorLoader, Vectors
from worldbook.runtime.background import AFTER_THE_TURN_S, LatestPerKey
from worldbook.runtime.lru import LRU
from worldbook.runtime.metrics import metrics

LanguageSource = Callable[[str], Mapping[str, str]]
"""``languages(book_id) -> {entry_id: language}``: the language of each entry's text (used to
centre rows per language; an entry missing from the map counts as one unknown language)."""


@dataclass(frozen=True, slots=True)
class _BookIndex:
    index: Any  # faiss.IndexFlatIP (untyped)
    entries: tuple[str, ...]  # each entry once; rows were added grouped by entry
    starts: npt.NDArray[np.int64]  # first row of each entry
    labels: npt.NDArray[np.int64]  # 0..rows-1, the "subset" that is every row
    nbytes: int
    correction: str  # the version of the language correction applied to the rows ("" = none)
    indexed: IndexedEntries  # each entry's text hash, and this build's number
    generation: int  # the book's invalidation count when its vectors were read


class FaissIndex:
    """The :class:`worldbook.ports.VectorIndex` over FAISS.

    Args:
        loader: ``loader(book_id) -> (entry_ids, vectors)`` — the book's current vectors of the
            active model (e.g. ``lambda b: store.load_book_vectors(b, model_id)``).
        max_books: how many book indexes stay cached.
        max_bytes: how many bytes of vectors stay cached; a book larger than this alone is
            searched but not kept.
        combination: how the per-message scores combine (default: the measured choice).
        correction: the language correction of the active model (None: raw vectors).
        languages: each entry's language, for the per-language centring of the correction.
        background: after :meth:`invalidate`, keep serving the previous build of a cached book
            while a daemon thread makes the new one (served processes); otherwise drop it.
    """

    def __init__(
        self,
        loader: VectorLoader,
        *,
        max_books: int = 1000,
        max_bytes: int = 1 << 30,
        combination: QueryCombination = DEFAULT_COMBINATION,
        correction: LanguageCorrection | None = None,
        languages: LanguageSource | None = None,
        background: bool = False,
    ) -> None:
        if max_books < 1:
            raise InvalidInput(f"max_books must be at least 1; got {max_books}.", field="max_books")
        if max_bytes < 1:
            raise InvalidInput(f"max_bytes must be at least 1; got {max_bytes}.", field="max_bytes")
        # A turn scores at most a few thousand rows against ≤ 6 messages: OpenMP fan-out costs
        # more than it saves, and with fewer free cores than threads (a pinned or busy process)
        # its workers spin — measured 5 ms instead of 0.4 ms per search on one core
        # (docs/design/semantic-search.md).
        faiss.omp_set_num_threads(1)
        self._loader = loader
        self._combination = combination
        self._correction = correction
        self._languages = languages
        self._lock = threading.Lock()  # guards the generations
        self._cache: LRU[str, _BookIndex] = LRU(
            max_books, max_weight=max_bytes, weigh=lambda book: book.nbytes, name="vector_index"
        )
        # Bumped by invalidate(): a build from vectors read before the bump is out of date.
        self._generation: dict[str, int] = {}
        self._builds = itertools.count(1)
        self._refresher: LatestPerKey[str, str] | None = (
            LatestPerKey(self._refresh, name="worldbook-index-build", delay_s=AFTER_THE_TURN_S)
            if background
            else None
        )

    # --- the VectorIndex port -----------------------------------------------------------
    def search(self, book_ids: Sequence[str], queries: Vectors, k: int) -> list[SemanticHit]:
        """Best ``k`` entries over ``book_ids`` for ``queries`` (one row per message, oldest
        first), best first; ties by book order in ``book_ids``, then entry id."""
        if k < 1:
            raise InvalidInput(f"k must be at least 1; got {k}.", field="k")
        matrix = np.ascontiguousarray(queries, dtype=np.float32)
        require_messages(matrix, field="queries", shape="(messages, dim)", first="row")
        found: list[tuple[int, str, _BookIndex]] = []
        for position, book_id in enumerate(dict.fromkeys(book_ids)):
            book = self._book(book_id)
            if book is None:
                continue
            if book.index.d != matrix.shape[1]:
                raise IndexUnavailable(
                    f"book {book_id} has vectors of dimension {book.index.d} but the query has "
                    f"{matrix.shape[1]}; re-index the book with the active embedder "
                    "(`worldbook index --rebuild`)."
                )
            found.append((position, book_id, book))
        if not found:
            return []
        if self._correction is not None:
            matrix = self._correction.queries(matrix)
        # One combination over the rows of every book searched: a centred combination measures
        # each score against the message's mean over all candidates, so books stay comparable.
        combined = combine_scores(
            np.concatenate([_score_all_rows(book, matrix) for _, _, book in found], axis=1),
            self._combination,
        )
        hits: list[tuple[float, int, str, str]] = []
        offset = 0
        for position, book_id, book in found:
            rows = int(book.index.ntotal)
            best = best_chunk_scores(combined[offset : offset + rows], book.starts)
            offset += rows
            for i in _top_with_ties(best, k):
                hits.append((float(best[i]), position, book.entries[i], book_id))
        hits.sort(key=lambda h: (-h[0], h[1], h[2]))
        return [SemanticHit(book_id=b, entry_id=e, score=s) for s, _, e, b in hits[:k]]

    def invalidate(self, book_id: str) -> None:
        with self._lock:
            self._generation[book_id] = self._generation.get(book_id, 0) + 1
            if self._refresher is None or book_id not in self._cache:
                self._cache.pop(book_id)
                return
        self._refresher.submit(book_id, book_id)

    def indexed_entries(self, book_id: str) -> IndexedEntries:
        """The entries the book's searches score now (loads and caches the book's index)."""
        book = self._book(book_id)
        return book.indexed if book is not None else IndexedEntries({}, 0)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no background build is pending (tests, benchmarks)."""
        return self._refresher.wait_idle(timeout) if self._refresher is not None else True

    # --- introspection (tests, metrics) -------------------------------------------------
    @property
    def cached_books(self) -> list[str]:
        """Cached book ids, least recently used first."""
        return self._cache.keys()

    @property
    def cached_bytes(self) -> int:
        return self._cache.weight

    @property
    def correction_version(self) -> str:
        """The language correction searches apply ("" when vectors are used raw)."""
        return self._correction.version if self._correction is not None else ""

    # --- internals ----------------------------------------------------------------------
    def _book(self, book_id: str) -> _BookIndex | None:
        with self._lock:
            cached = self._cache.get(book_id)
            generation = self._generation.get(book_id, 0)
        # In background mode an out-of-date build keeps serving until its refresh lands (its
        # entries' text hashes keep edited entries out); otherwise it is rebuilt here.
        if cached is not None and (cached.generation == generation or self._refresher is not None):
            return cached
        # Built outside the lock so a slow load does not block searches of other books.
        return self._keep(book_id, self._build(book_id, generation), generation)

    def _refresh(self, book_id: str) -> None:
        with self._lock:
            generation = self._generation.get(book_id, 0)
        try:
            built = self._build(book_id, generation)
        except Exception:
            with self._lock:  # the next search builds it (and reports the error) itself
                self._cache.pop(book_id)
            raise
        self._keep(book_id, built, generation)

    def _keep(self, book_id: str, built: _BookIndex | None, generation: int) -> _BookIndex | None:
        """Cache ``built`` unless a build from newer vectors got there first."""
        with self._lock:
            cached = self._cache.get(book_id)
            if cached is not None and cached.generation > generation:
                return built
            # Read before an invalidate(): used by this search, kept only in background mode,
            # where it serves until the refresh already queued for that invalidate() lands.
            if self._refresher is None and generation < self._generation.get(book_id, 0):
                return built
            if built is None:
                self._cache.pop(book_id)
            else:
                self._cache.put(book_id, built)
        return built

    def _build(self, book_id: str, generation: int) -> _BookIndex | None:
        metrics().cache_builds.labels("vector_index").inc()
        try:
            loaded = BookVectors(*self._loader(book_id))
        except WorldbookError:
            raise
        except Exception as exc:
            raise IndexUnavailable(
                f"could not load the vectors of book {book_id}: {exc}. Check the database."
            ) from exc
        entry_ids = loaded.entry_ids
        matrix = np.ascontiguousarray(loaded.vectors, dtype=np.float32)
        hashes = loaded.content_hashes or [""] * len(entry_ids)
        if matrix.ndim != 2 or not matrix.shape[0] == len(entry_ids) == len(hashes):
            raise IndexUnavailable(
                f"book {book_id}: the loader returned {len(entry_ids)} entry ids for a vector "
                f"matrix of shape {matrix.shape} ({len(hashes)} text hashes); each row needs "
                "exactly one entry id and one hash."
            )
        if matrix.shape[0] == 0:
            return None
        order, entries, starts = group_rows(entry_ids)
        grouped = np.ascontiguousarray(matrix[order])
        if self._correction is not None:
            grouped = self._corrected_rows(book_id, grouped, [entry_ids[i] for i in order])
        try:
            index = faiss.IndexFlatIP(int(grouped.shape[1]))
            index.add(grouped)
        except Exception as exc:
            raise IndexUnavailable(
                f"could not build the FAISS index of book {book_id}: {exc}"
            ) from exc
        indexed = IndexedEntries(dict(zip(entry_ids, hashes, strict=True)), next(self._builds))
        labels = np.arange(grouped.shape[0], dtype=np.int64)
        # Rows dominate; an entry's id and hash in the map cost about 200 bytes more.
        nbytes = int(grouped.nbytes + labels.nbytes + starts.nbytes) + 200 * len(entries)
        return _BookIndex(
            index,
            tuple(entries),
            starts,
            labels,
            nbytes,
            self.correction_version,
            indexed,
            generation,
        )

    def _corrected_rows(self, book_id: str, rows: Vectors, row_entries: list[str]) -> Vectors:
        """The book's rows under the language correction (projected, centred per language)."""
        correction = self._correction
        assert correction is not None
        if rows.shape[1] != correction.dim:
            raise IndexUnavailable(
                f"book {book_id} has vectors of dimension {rows.shape[1]} but the language "
                f"correction is for dimension {correction.dim}; re-index the book with the "
                "active embedder (`worldbook index --rebuild`)."
            )
        try:
            languages = self._languages(book_id) if self._languages is not None else {}
        except WorldbookError:
            raise
        except Exception as exc:
            raise IndexUnavailable(
                f"could not read the entry languages of book {book_id}: {exc}. Check the database."
            ) from exc
        return correction.rows(rows, [languages.get(e, "") for e in row_entries])


def _score_all_rows(book: _BookIndex, queries: Vectors) -> Vectors:
    """The ``(messages, rows)`` inner products of every query with every row of the book."""
    count, rows = queries.shape[0], int(book.index.ntotal)
    labels = np.ascontiguousarray(np.broadcast_to(book.labels, (count, rows)))
    scores = np.empty((count, rows), dtype=np.float32)
    try:
        book.index.compute_distance_subset(
            count, faiss.swig_ptr(queries), rows, faiss.swig_ptr(scores), faiss.swig_ptr(labels)
        )
    except Exception as exc:
        raise IndexUnavailable(f"FAISS search failed: {exc}") from exc
    return scores


def _top_with_ties(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` best scores plus every score tied with the k-th (unordered)."""
    if scores.shape[0] <= k:
        return np.arange(scores.shape[0])
    kth = np.partition(scores, -k)[-k]
    return np.flatnonzero(scores >= kth)
