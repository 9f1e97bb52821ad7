"""Fakes of the ports, shipped in the package so tests need no models or services:
a word tokenizer, a hashing embedder, a tokenizer source, a queue that records, a usage sink
that writes at once."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from worldbook.core.tokens import Tokenizer
from worldbook.errors import InvalidInput
from worldbook.ports import Vectors

_WORD = re.compile(r"\w+", re.UNICODE)


class WordTokenizer:
    """A deterministic fake tokenizer: one token per word or punctuation mark."""

    _TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    @property
    def id(self) -> str:
        return "fake:words"

    @property
    def is_estimate(self) -> bool:
        return False

    def count(self, text: str) -> int:
        return len(self._TOKEN.findall(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        for i, match in enumerate(self._TOKEN.finditer(text)):
            if i == max_tokens:
                return text[: match.start()].rstrip()
        return text


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


class StaticTokenizers:
    """A ``TokenizerSource`` over fixed tokenizers (default: one :class:`WordTokenizer`)."""

    def __init__(self, tokenizers: Mapping[str, Tokenizer] | None = None) -> None:
        found = dict(tokenizers) if tokenizers else {"fake:words": WordTokenizer()}
        self._by_id = {t.id: t for t in found.values()} | found
        self.default_id = next(iter(found.values())).id

    def canonical_id(self, tokenizer_id: str | None) -> str:
        return self.get(tokenizer_id).id

    def get(self, tokenizer_id: str | None) -> Tokenizer:
        if tokenizer_id is None:
            return self._by_id[self.default_id]
        found = self._by_id.get(tokenizer_id)
        if found is None:
            raise InvalidInput(f"Unknown tokenizer {tokenizer_id!r}.", field="tokenizer")
        return found


class RecordingQueue:
    """An ``IndexQueue`` that keeps the ids it is given; ``run`` hands them to an indexer."""

    def __init__(self, index_fn: Callable[[Sequence[str]], object] | None = None) -> None:
        self.enqueued: list[str] = []
        self._index_fn = index_fn
        self.closed = False

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        self.enqueued.extend(entry_ids)
        if self._index_fn is not None:
            self._index_fn(list(entry_ids))

    def healthy(self) -> bool:
        return not self.closed

    def pending(self) -> int:
        return 0

    def close(self) -> None:
        self.closed = True


class ImmediateUsage:
    """A ``UsageSink`` that writes each turn's usage at once (no background thread)."""

    def __init__(self, write: Callable[[Mapping[str, int], Mapping[str, Mapping[str, int]]], None]):
        self._write = write
        self.dropped = 0

    def record(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None:
        per_entry: dict[str, str] = {}
        for entry_id, via in uses:
            per_entry.setdefault(entry_id, via)
        self._write(dict.fromkeys(book_ids, 1), {e: {v: 1} for e, v in per_entry.items()})

    def flush(self, timeout: float | None = 10.0) -> bool:
        return True

    def close(self, timeout: float | None = 10.0) -> None:
        return None

    def pending(self) -> int:
        return 0
