"""The meaning hits of a turn diversified (ADR 0021, :mod:`worldbook.core.diversity`): how
alike two entries are, from their stored vectors.

An entry's vector is the mean of its stored chunk vectors of the primary model, centred on its
book's mean entry and normalised: raw e5 vectors of one book are all alike (cosines of 0.7–0.9),
centred ones tell a near-duplicate (a confuser family, the same place described twice) from an
unrelated entry. The vectors of a book are read from the store once per index build and kept
with the book's other derived data in the matcher cache.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from worldbook.core.diversity import diversify
from worldbook.core.types import LoreBook, SemanticHit, rescored
from worldbook.ports import VectorIndex, VectorStore
from worldbook.ports.search import Vectors
from worldbook.runtime.matcher_cache import MatcherCache

Key = tuple[str, str]  # (book id, entry id)
EntryVectors = tuple[dict[str, int], Vectors]
"""Row of each entry id, and one centred, normalised row per entry."""


def centred_entry_vectors(entry_ids: Sequence[str], rows: Vectors) -> EntryVectors:
    """One row per entry (the mean of its chunk rows), centred on the book's mean entry and
    normalised (a row that centres to nothing stays zero)."""
    order = {e: i for i, e in enumerate(dict.fromkeys(entry_ids))}
    if not order:
        return order, np.zeros((0, rows.shape[1] if rows.ndim == 2 else 0), np.float32)
    sums = np.zeros((len(order), rows.shape[1]), np.float64)
    counts = np.zeros(len(order), np.float64)
    where = np.fromiter((order[e] for e in entry_ids), np.intp, len(entry_ids))
    np.add.at(sums, where, rows)
    np.add.at(counts, where, 1.0)
    means = sums / counts[:, None]
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    centred = means - means.mean(axis=0, keepdims=True)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    return order, (centred / np.where(norms > 1e-9, norms, np.inf)).astype(np.float32)


def book_entry_vectors(
    view: LoreBook,
    store: VectorStore,
    index: VectorIndex,
    model_id: str,
    matchers: MatcherCache,
) -> EntryVectors:
    """The book's centred entry vectors (cached per book version and index build)."""
    build = str(index.indexed_entries(view.id).build)

    def load() -> EntryVectors:
        found = store.load_book_vectors(view.id, model_id)
        return centred_entry_vectors(found.entry_ids, found.vectors)

    return matchers.derived(view, ("entry-vectors", model_id, build), load)


def similarities(keys: Sequence[Key], vectors: Mapping[str, EntryVectors]) -> dict[Key, Vectors]:
    """Each key's centred vector (keys without one are left out: alike to nothing)."""
    out: dict[Key, Vectors] = {}
    for key in keys:
        found = vectors.get(key[0])
        if found is not None and key[1] in found[0]:
            out[key] = found[1][found[0][key[1]]]
    return out


def diversified(
    hits: Sequence[SemanticHit],
    vectors: Mapping[str, EntryVectors],
    strength: float,
    kept: Collection[Key] = (),
) -> list[SemanticHit]:
    """The hits re-scored by maximal marginal relevance (unchanged for a strength of 0);
    ``kept``: the entries the conversation names, whose scores never change."""
    if strength == 0 or len(hits) < 2:
        return list(hits)
    pairs = [((h.book_id, h.entry_id), h.score) for h in hits]
    rows = similarities([k for k, _ in pairs], vectors)

    def similarity(a: Key, b: Key) -> float:
        va, vb = rows.get(a), rows.get(b)
        return 0.0 if va is None or vb is None else float(va @ vb)

    best = diversify(pairs, similarity, strength, kept)
    return rescored(best, hits)
