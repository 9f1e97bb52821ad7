"""``WORLDBOOK_EMBEDDER=fake``: a deterministic embedder with no model (hashed bag of words and
character trigrams), for tests, demos and the byte-identity snapshots of a refactoring."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from worldbook.ports import Vectors

_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """A deterministic fake embedder: hashed bag of words and character trigrams.

    Texts that share words land close together, which is enough to test ranking plumbing.
    """

    def __init__(self, dim: int = 256, model_id: str = "fake-hashing-v1") -> None:
        self._dim = dim
        self._model_id = model_id
        self.calls: list[int] = []  # batch sizes, so tests can assert caching and batching

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_passage_chars(self) -> int:
        return 2000

    @property
    def loaded(self) -> bool:
        return True

    def _features(self, text: str) -> list[str]:
        norm = unicodedata.normalize("NFKC", text).casefold()
        words = _WORD.findall(norm)
        grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def _embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)
