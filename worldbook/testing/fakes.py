"""Fakes of the ports, shipped in the package so tests need no models or services:
a word tokenizer, a tokenizer source, a queue that records, a usage sink
that writes at once."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from worldbook.core.tokens import Tokenizer
from worldbook.errors import InvalidInput


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
