"""The small Protocols the service layer talks to; adapters implement them, fakes ship in
:mod:`worldbook.testing`.

Only plain data and numpy arrays cross these boundaries. Adapters translate their foreign
errors into :mod:`worldbook.errors` types before they leave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from worldbook.core.types import SemanticHit

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one L2-normalised row per text."""


@runtime_checkable
class Tokenizer(Protocol):
    """Counts and cuts text in a model's tokens."""

    @property
    def id(self) -> str:
        """Stable id, part of every cached token count (``"tiktoken:cl100k_base"``)."""
        ...

    @property
    def is_estimate(self) -> bool:
        """True only for the character-based estimate; reports label such counts."""
        ...

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``max_tokens`` tokens."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into normalised vectors. ``model_id`` is stored with every vector."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_passage_chars(self) -> int:
        """Lore longer than this is chunked so the model's input limit does not cut it."""
        ...

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        """Embed entry texts (title + aliases + lore) for storage."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed conversation messages for search."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-entry search over the current vectors of some books."""

    def search(self, book_ids: Sequence[str], queries: Vectors, k: int) -> list[SemanticHit]:
        """Best ``k`` entries over all ``book_ids`` for the combined queries, best first."""
        ...

    def invalidate(self, book_id: str) -> None:
        """Forget any cached index of this book (its entries or vectors changed)."""
        ...


@runtime_checkable
class IndexQueue(Protocol):
    """Where entries wait to be embedded: Celery over Redis, or an in-process worker."""

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        """Ask for these entries to be indexed (idempotent; safe to call twice)."""
        ...

    def healthy(self) -> bool:
        """Whether work handed over now will be picked up."""
        ...
