"""The cross-lingually aligned second view of the lore and the fused meaning search (ADR 0016).

Entries are embedded twice: by the primary embedder (e5-small, DESIGN §4 "Embeddings") and by
an aligned one (Universal Sentence Encoder multilingual v3, trained on translation ranking).
Each stored vector keeps its model id, and each view has its own vector index rebuilt from the
database like the primary's. A turn asks both views for the nearest entries of its books
(each view's messages embedded once and cached) and fuses the two rankings with
:func:`worldbook.core.fusion.fuse`. The aligned model reads 16 languages: a conversation in
another language is searched by the primary view alone, and an entry written in one keeps its
primary score. Without an aligned view the search is the primary's, unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from worldbook.core.fusion import fuse, ranked
from worldbook.core.language_id import LANGUAGE_ID_VERSION, detect_language
from worldbook.core.types import LoreBook, SemanticHit, rescored
from worldbook.errors import ServiceUnavailable
from worldbook.ports import Embedder, VectorIndex
from worldbook.runtime.lru import LRU
from worldbook.service.entry_languages import HEAD_CHARS
from worldbook.service.query_embeddings import QueryEmbeddings

logger = logging.getLogger(__name__)

ROMANIAN_MARKS = re.compile("[șțţ]")
"""Letters of Romanian no language USE reads has (s and t with a comma below, t with a
cedilla; not s with a cedilla, which is Turkish too): the engine's detector does not tell
Romanian apart, and USE was not trained on it."""

USE_LANGUAGES = frozenset(
    ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh")
)
"""The languages USE multilingual v3 was trained on (its 16, Chinese counted once). Among the
languages :func:`detect_language` tells apart it lacks Greek, Hindi and Vietnamese; Romanian is
recognised by :data:`ROMANIAN_MARKS`."""

WIDEN = 3
"""Each view returns this many times the turn's candidates, so an entry one view ranks just
below the cut can still rise in the fused order."""

Key = tuple[str, str]  # (book id, entry id)


@dataclass
class AlignedView:
    """The aligned embedder with its query cache and vector index, and the fusion weight."""

    embedder: Embedder
    index: VectorIndex
    weight: float = 1.0
    covered: frozenset[str] = USE_LANGUAGES
    cross_weight: float | None = None
    queries: QueryEmbeddings = field(init=False)
    _languages: LRU[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.queries = QueryEmbeddings(self.embedder)
        self._languages = LRU(200_000)

    @property
    def model_id(self) -> str:
        return self.embedder.model_id

    def languages(self, book: LoreBook) -> dict[str, str]:
        """Each entry's language (its text's language guessed once, cached by a hash of the
        text)."""
        out: dict[str, str] = {}
        for entry in book.entries:
            text = f"{entry.title}\n{entry.lore}"
            key = f"{LANGUAGE_ID_VERSION}:{hashlib.sha1(text.encode()).hexdigest()}"
            language = self._languages.get(key)
            if language is None:
                language = text_language(text[:HEAD_CHARS])
                self._languages.put(key, language)
            out[entry.id] = language
        return out

    def blind(self, book: LoreBook) -> frozenset[str]:
        """The entries of ``book`` written in a language the aligned model does not read."""
        return frozenset(e for e, lang in self.languages(book).items() if lang not in self.covered)


def text_language(text: str) -> str:
    """The language of a text as the aligned view needs it: the engine's guess, but Romanian
    (which the guess would file under a language USE reads) told apart by its letters."""
    letters = sum(map(str.isalpha, text))
    if len(ROMANIAN_MARKS.findall(text.casefold())) > 0.005 * max(1, letters):
        return "ro"
    return detect_language(text)


def query_language(texts: Sequence[str]) -> str:
    """The conversation's language, guessed from its recent messages together."""
    return _tail_language("\n".join(texts)[-2000:])


@functools.lru_cache(maxsize=256)
def _tail_language(tail: str) -> str:
    # A turn asks for the same messages' language more than once (the fused search and the
    # primary's gloss views, ADR 0023), at ~0.3 ms a guess: remembered, the guess is made once.
    return text_language(tail)


def fused_search(
    primary: Callable[[Sequence[str], Sequence[str], int], list[SemanticHit]],
    aligned: AlignedView | None,
    texts: Sequence[str],
    book_ids: Sequence[str],
    k: int,
    blind: Callable[[str], frozenset[str]] = lambda _book: frozenset(),
    pool: int | None = None,
    languages: Callable[[str], Mapping[str, str]] = lambda _book: {},
) -> list[SemanticHit]:
    """The ``k`` nearest entries of ``book_ids`` for the messages ``texts`` (the recent ones,
    oldest first): the primary view's search ``primary(texts, book_ids, k)`` alone without an
    aligned view, for a weight of 0 or a conversation in a language the aligned model does
    not read; else both views fused.
    ``blind(book_id)``: the book's entries the aligned model cannot read; ``pool``: how many
    candidates each view returns (default ``k * WIDEN``; the fused scores depend on it);
    ``languages(book_id)``: each entry's language, for the view's ``cross_weight``."""
    if aligned is None or aligned.weight == 0 or not texts:
        return primary(texts, book_ids, k)
    language = query_language(texts)
    if language not in aligned.covered:
        return primary(texts, book_ids, k)
    wide = max(k, pool or k * WIDEN)
    first = primary(texts, book_ids, wide)
    try:
        vectors = aligned.queries.embed(list(texts))
        second = aligned.index.search(list(book_ids), vectors, wide)
    except ServiceUnavailable as exc:
        # The aligned view improves the ranking; the primary still answers the turn.
        logger.warning("aligned view unavailable: %s", exc)
        return first[:k]
    order = {b: i for i, b in enumerate(dict.fromkeys(book_ids))}
    ruled_out: set[Key] = {(b, e) for b in {h.book_id for h in second} for e in blind(b)}
    weights = None
    if aligned.cross_weight is not None:
        # Where the entry's language is not the conversation's, e5's same-language pull
        # (ADR 0003) tells least and the aligned view, trained on translations, most.
        cross = aligned.cross_weight
        weights = {
            (b, e): cross for b in order for e, lang in languages(b).items() if lang != language
        }
    fused = fuse(_scores(first), _scores(second), aligned.weight, ruled_out, weights)
    # Ties: book order, then entry id (as the primary index orders them).
    best = ranked(dict(sorted(fused.items(), key=lambda kv: (order.get(kv[0][0], 0), kv[0]))), k)
    return rescored(best, first)


def _scores(hits: Sequence[SemanticHit]) -> Mapping[Key, float]:
    found: dict[Key, float] = {}
    for hit in hits:
        found.setdefault((hit.book_id, hit.entry_id), hit.score)
    return found
