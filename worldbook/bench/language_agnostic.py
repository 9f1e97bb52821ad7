"""Training-free corrections for same-language pull in multilingual retrieval (ADR 0003).

A multilingual encoder puts a language-identity component in every vector: two texts in one
language score higher than a text and its translation. Three query-time corrections, none fit
on an evaluation set:

* :class:`LanguageSubspace` — the span of the per-language mean vectors of a *parallel* neutral
  corpus (``language_corpus/<lang>.txt``: the same 30 everyday sentences in 16 languages, written
  for this project). Because the sentences are translations, the means differ by language only;
  their centred span (15 dimensions for 16 languages) is the language subspace. Projecting it out
  of the *query* vector alone is enough: for a projector ``P``, ``(Pq)·d == (Pq)·(Pd)``, so
  stored entry vectors stay raw and the index is unchanged. (LIR, Yang et al. 2021, "A Simple and
  Effective Method To Eliminate the Self Language Bias in Multilingual Representations", removes
  per-language principal directions; here one shared subspace, so no language id is needed.)
* per-language score centring / z-scores over the candidates (the book's own entries at query
  time): each query's scores are standardised within each candidate language, so every
  language's best candidates compete on equal terms ("balancing across languages").
* per-language mean centring of candidates (means from the candidates themselves, languages
  guessed from the text by :mod:`worldbook.bench.language_id`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from worldbook.bench.language_id import detect_language
from worldbook.ports import Embedder, Vectors
from worldbook.ports.wrapped_embedder import EmbedderWrapper

CORPUS_DIR = Path(__file__).resolve().parent / "language_corpus"
FloatMatrix = npt.NDArray[np.float32]


def corpus_languages(folder: Path = CORPUS_DIR) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.txt"))


def read_corpus(folder: Path = CORPUS_DIR) -> dict[str, list[str]]:
    """Language -> sentences (one a line)."""
    return {
        lang: [s.strip() for s in (folder / f"{lang}.txt").read_text("utf-8").splitlines()]
        for lang in corpus_languages(folder)
    }


def corpus_digest(folder: Path = CORPUS_DIR) -> str:
    """A short hash of the corpus text: part of the correction's version."""
    h = hashlib.sha256()
    for lang, lines in read_corpus(folder).items():
        h.update(lang.encode())
        h.update("\n".join(lines).encode())
    return h.hexdigest()[:12]


def _normalise(x: FloatMatrix) -> FloatMatrix:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.asarray(x / np.maximum(norms, 1e-12), dtype=np.float32)


class LanguageSubspace:
    """An orthonormal basis (rows) of the language subspace and the projection that removes it.

    Args:
        means: one mean vector per language (rows).
        rank: how many principal directions of the centred means to keep (default: all,
            languages - 1).
    """

    def __init__(self, means: FloatMatrix, rank: int | None = None) -> None:
        centred = np.asarray(means, dtype=np.float64) - means.mean(axis=0)
        _, singular, vt = np.linalg.svd(centred, full_matrices=False)
        keep = rank if rank is not None else len(means) - 1
        self.singular_values = singular[:keep]
        self.basis = np.asarray(vt[:keep], dtype=np.float32)

    @classmethod
    def from_corpus(
        cls,
        embedder: Embedder,
        *,
        side: str = "passage",
        rank: int | None = None,
        corpus: dict[str, list[str]] | None = None,
    ) -> LanguageSubspace:
        """From the parallel corpus embedded as passages (or queries)."""
        texts = corpus or read_corpus()
        embed = embedder.embed_passages if side == "passage" else embedder.embed_queries
        means = np.stack([embed(lines).mean(axis=0) for lines in texts.values()])
        return cls(means, rank)

    def remove(self, vectors: FloatMatrix, strength: float = 1.0) -> FloatMatrix:
        """``vectors`` minus ``strength`` times their component in the subspace (not
        renormalised; 1.0 removes it entirely)."""
        v = np.asarray(vectors, dtype=np.float32)
        return np.asarray(v - strength * ((v @ self.basis.T) @ self.basis), dtype=np.float32)

    def remove_normalised(self, vectors: FloatMatrix) -> FloatMatrix:
        return _normalise(self.remove(vectors))


def language_means(vectors: FloatMatrix, labels: npt.NDArray[np.int_], n: int) -> FloatMatrix:
    return np.stack([vectors[labels == i].mean(axis=0) for i in range(n)]).astype(np.float32)


def standardise_per_language(
    scores: FloatMatrix, groups: Sequence[npt.NDArray[np.bool_]], *, divide: bool = True
) -> FloatMatrix:
    """Each row's scores centred (and divided by the std) within each candidate language."""
    out = np.empty_like(scores)
    for mask in groups:
        part = scores[:, mask]
        centred = part - part.mean(axis=1, keepdims=True)
        if divide:
            centred = centred / np.maximum(part.std(axis=1, keepdims=True), 1e-6)
        out[:, mask] = centred
    return out


def balanced_merge(scores: FloatMatrix, groups: Sequence[npt.NDArray[np.bool_]]) -> FloatMatrix:
    """Round-robin across languages: a candidate's new score is minus its rank within its own
    language (best = 0), ties between languages broken by the raw score."""
    out = np.empty_like(scores)
    for mask in groups:
        part = scores[:, mask]
        ranks = np.argsort(np.argsort(-part, axis=1), axis=1)
        out[:, mask] = -ranks.astype(np.float32) + part * 1e-3
    return out


class QueryProjected(EmbedderWrapper):
    """An embedder whose query vectors have the language subspace removed: the correction as
    the engine would apply it at query time. With ``rows`` false passages stay raw (query-side
    only); with ``rows`` true passages are projected and renormalised too (what an index would
    do to the stored vectors when it is built)."""

    def __init__(
        self, inner: Embedder, subspace: LanguageSubspace, strength: float = 1.0, rows: bool = False
    ) -> None:
        super().__init__(inner)
        self._subspace = subspace
        self._strength = strength
        self._rows = rows

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        vectors = self._inner.embed_passages(texts)
        return self._subspace.remove_normalised(vectors) if self._rows else vectors

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        found = self._subspace.remove(self._inner.embed_queries(texts), self._strength)
        return _normalise(found) if self._rows else found


def centre_by_language(
    vectors: FloatMatrix, labels: Sequence[str] | npt.NDArray[Any], shrink: float = 20.0
) -> FloatMatrix:
    """Each row minus its language's offset from the overall mean, the offset shrunk by
    ``n / (n + shrink)`` so a language with a handful of rows is barely moved. Scoring a query
    against these rows equals centring its scores per candidate language (minus a constant)."""
    v = np.asarray(vectors, dtype=np.float32)
    tags = np.asarray(labels)
    overall = v.mean(axis=0)
    out = v.copy()
    for label in np.unique(tags):
        rows = tags == label
        n = int(rows.sum())
        out[rows] -= (n / (n + shrink)) * (v[rows].mean(axis=0) - overall)
    return out


class RowCentred(EmbedderWrapper):
    """An embedder whose passage batches are centred per language (:func:`centre_by_language`,
    languages guessed from each text by :func:`detect_language`): how a book's rows would be
    centred when its index is built, for benchmarks that embed one book per batch."""

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        vectors = self._inner.embed_passages(texts)
        return centre_by_language(vectors, [detect_language(t) for t in texts])
