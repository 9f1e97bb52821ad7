"""The meaning-search ports: an :class:`Embedder` turns texts into vectors, a
:class:`VectorIndex` finds the nearest entries of some books (DESIGN §4 "Embeddings", "Index").

Only plain data and numpy arrays cross these boundaries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from worldbook.core.types import SemanticHit

Vectors = npt.NDArray[np.float32]
"""A 2-D float32 array, one L2-normalised row per text."""


class BookVectors(NamedTuple):
    """A book's stored vectors of one model: one row per chunk, an entry's chunks together."""

    entry_ids: list[str]
    vectors: Vectors
    content_hashes: list[str] | None = None
    """Per row, the hash of the entry text the row was embedded from (what the store joins
    on). None only from loaders that vouch every row is current (tests, benchmarks)."""


VectorLoader = Callable[[str], "BookVectors | tuple[list[str], Vectors]"]
"""``loader(book_id)``: a book's current vectors, for an index to build from (a plain
``(entry ids, matrix)`` pair is accepted from loaders that vouch every row is current)."""


@dataclass(frozen=True, slots=True)
class IndexedEntries:
    """What one build of a book's vector index can score.

    ``hashes`` maps each entry with vectors to the hash of the text they were embedded from
    ("" when the loader gave none); ``build`` changes whenever the index is rebuilt, so a view
    of the book built from these flags can be cached under it.
    """

    hashes: Mapping[str, str]
    build: int

    def current(self, entry_id: str, content_hash: str) -> bool:
        """Whether the entry's vectors were embedded from this text: vectors of another
        version of an entry's text are never used (DESIGN §2 rule 6), also while an index
        built before an edit is still being served."""
        found = self.hashes.get(entry_id)
        return found is not None and found in ("", content_hash)


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

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (models load on first use; readiness reports it)."""
        ...


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest-entry search over the current vectors of some books."""

    def search(self, book_ids: Sequence[str], queries: Vectors, k: int) -> list[SemanticHit]:
        """Best ``k`` entries over all ``book_ids`` for the combined queries, best first."""
        ...

    def invalidate(self, book_id: str) -> None:
        """The book's stored vectors changed: the next searches must see the new ones (an
        index may keep serving its previous build while the new one is made, since
        :meth:`indexed_entries` tells which entries that build may score)."""
        ...

    def indexed_entries(self, book_id: str) -> IndexedEntries:
        """The entries the book's searches score right now, with the text version of each."""
        ...
