"""What text stands for an entry in vector space, and how long lore is cut to fit a model.

An entry is embedded as its names followed by its lore: ``"Title (alias, alias)\\nlore"``. The
names are part of the text because an entry is often asked for by name alone, and lore rarely
repeats its own title (docs/design/semantic-search.md: content-only embedding misses names).

A model reads a bounded number of tokens. Lore longer than the embedder's ``max_passage_chars``
is split into chunks at paragraph, then sentence, then word boundaries; every chunk repeats the
names so each one still says what it is about, and the entry scores by its best chunk
(:func:`best_per_entry`). Lengths are measured in *units*: one per character, ``WIDE_UNITS`` for an
East Asian wide or full-width character, because a Han or Kana character costs about one model
token where a Latin character costs about a quarter of one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from worldbook.errors import InvalidInput

WIDE_UNITS = 3
"""Units counted for one East Asian wide/full-width character (see the module docstring)."""

MIN_PASSAGE_UNITS = 64
"""Smallest ``max_units`` accepted: below it a chunk could not hold a name and a sentence."""

# Boundaries tried in order; a piece still too long after the last one is cut hard.
_PARAGRAPH = re.compile(r"\n\s*\n")
# After sentence-final punctuation (Latin, Greek ;, Arabic ؟, Devanagari danda, CJK full stops).
_SENTENCE = re.compile(r"(?<=[.!?…;؟।])\s+|(?<=[。！？])")
_WHITESPACE = re.compile(r"\s+")
_LEVELS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_PARAGRAPH, "\n\n"),
    (_SENTENCE, " "),
    (_WHITESPACE, " "),
)


def char_units(char: str) -> int:
    """Units one character costs (``WIDE_UNITS`` for East Asian wide/full-width, else 1)."""
    return WIDE_UNITS if unicodedata.east_asian_width(char) in ("W", "F") else 1


def text_units(text: str) -> int:
    """Length of ``text`` in units (see the module docstring)."""
    return sum(char_units(c) for c in text)


def head_units(text: str, max_units: int) -> str:
    """The longest head of ``text`` of at most ``max_units`` units (a query is cut to what
    the model reads instead of being windowed: see ``QueryEmbeddings``)."""
    if len(text) * WIDE_UNITS <= max_units:
        return text
    used = 0
    for i, char in enumerate(text):
        used += char_units(char)
        if used > max_units:
            return text[:i]
    return text


def entry_header(title: str, aliases: Iterable[str] = ()) -> str:
    """``"Title (alias, alias)"``: the title, then distinct aliases that differ from it."""
    title = title.strip()
    seen = {title.casefold()}
    names: list[str] = []
    for alias in aliases:
        alias = alias.strip()
        if alias and alias.casefold() not in seen:
            seen.add(alias.casefold())
            names.append(alias)
    return f"{title} ({', '.join(names)})" if names else title


def entry_text(title: str, aliases: Iterable[str], lore: str) -> str:
    """The text that stands for an entry: :func:`entry_header`, a newline, then the lore."""
    header = entry_header(title, aliases)
    lore = lore.strip()
    return f"{header}\n{lore}" if lore else header


def entry_content_hash(title: str, aliases: Sequence[str], lore: str) -> str:
    """sha256 (hex) of :func:`entry_text`: the hash that says whether a stored vector is
    current. Stores stamp every entry with it and stored vectors carry the hash they were
    computed from; a vector whose hash differs from the entry's is never used (DESIGN §2
    rule 6). Any change to what is embedded therefore changes the hash."""
    return hashlib.sha256(entry_text(title, aliases, lore).encode("utf-8")).hexdigest()


def passage_texts(title: str, aliases: Iterable[str], lore: str, max_units: int) -> list[str]:
    """The texts to embed for one entry: :func:`chunk_entry_text` of :func:`entry_text`."""
    return chunk_entry_text(entry_text(title, aliases, lore), max_units)


def chunk_entry_text(text: str, max_units: int) -> list[str]:
    """An entry text (names on the first line, then lore) as the texts to embed.

    One text if it fits in ``max_units``; otherwise the lore is split (:func:`split_text`) and
    every chunk starts with the first line, cut to a quarter of the budget if longer, so the
    lore keeps most of each chunk. Every returned text is at most ``max_units`` units.
    """
    if max_units < MIN_PASSAGE_UNITS:
        raise InvalidInput(
            f"max_units must be at least {MIN_PASSAGE_UNITS}; got {max_units}. "
            "Use the embedder's max_passage_chars.",
            field="max_units",
        )
    if text_units(text) <= max_units:
        return [text]
    header, _, lore = text.partition("\n")
    if not lore.strip():
        return split_text(text, max_units)
    header = _cut_units(header.strip(), max_units // 4)[0].rstrip()
    budget = max_units - text_units(header) - 1
    return [f"{header}\n{chunk}" for chunk in split_text(lore, budget)]


def split_text(text: str, max_units: int) -> list[str]:
    """Split ``text`` into stripped, non-empty chunks of at most ``max_units`` units each.

    Chunks are packed greedily from paragraphs, then sentences, then words; only a single word
    longer than the budget is cut inside. No non-whitespace character is lost or reordered.
    """
    if max_units < 1:
        raise InvalidInput(f"max_units must be at least 1; got {max_units}.", field="max_units")
    return [c for c in _split(text.strip(), max_units, 0) if c]


def _split(text: str, budget: int, level: int) -> list[str]:
    if text_units(text) <= budget:
        return [text]
    if level == len(_LEVELS):
        return _hard_cut(text, budget)
    pattern, joiner = _LEVELS[level]
    pieces: list[str] = []
    for part in pattern.split(text):
        part = part.strip()
        if part:
            pieces.extend(_split(part, budget, level + 1))
    return _pack(pieces, joiner, budget)


def _pack(pieces: Sequence[str], joiner: str, budget: int) -> list[str]:
    """Greedily join consecutive pieces while the result stays within ``budget`` units."""
    chunks: list[str] = []
    current = ""
    current_units = 0
    joiner_units = text_units(joiner)
    for piece in pieces:
        units = text_units(piece)
        if current and current_units + joiner_units + units <= budget:
            current += joiner + piece
            current_units += joiner_units + units
        else:
            if current:
                chunks.append(current)
            current, current_units = piece, units
    if current:
        chunks.append(current)
    return chunks


def _hard_cut(text: str, budget: int) -> list[str]:
    chunks: list[str] = []
    rest = text
    while rest:
        head, rest = _cut_units(rest, budget)
        if not head:  # a single wide character larger than the budget: take it anyway
            head, rest = rest[0], rest[1:]
        chunks.append(head)
    return chunks


def _cut_units(text: str, budget: int) -> tuple[str, str]:
    """Split ``text`` after the longest prefix of at most ``budget`` units."""
    used = 0
    for i, char in enumerate(text):
        used += char_units(char)
        if used > budget:
            return text[:i], text[i:]
    return text, ""


def best_per_entry(entry_ids: Sequence[str], scores: Sequence[float]) -> dict[str, float]:
    """Best score per entry over its rows (one row per chunk): an entry scores by its best chunk."""
    if len(entry_ids) != len(scores):
        raise InvalidInput(
            f"entry_ids and scores must have the same length; got {len(entry_ids)} and "
            f"{len(scores)}.",
            field="scores",
        )
    best: dict[str, float] = {}
    for entry_id, score in zip(entry_ids, scores, strict=True):
        value = float(score)
        if entry_id not in best or value > best[entry_id]:
            best[entry_id] = value
    return best


def group_rows(
    entry_ids: Sequence[str],
) -> tuple[npt.NDArray[np.int64], list[str], npt.NDArray[np.int64]]:
    """Order rows so each entry's chunks are adjacent, for :func:`best_chunk_scores`.

    Returns ``(order, entries, starts)``: ``order`` permutes the rows (stable), ``entries`` lists
    each entry once in order of first appearance, ``starts[i]`` is where entry ``i``'s rows begin
    in the permuted rows.
    """
    position: dict[str, int] = {}
    for entry_id in entry_ids:
        position.setdefault(entry_id, len(position))
    group = np.fromiter((position[e] for e in entry_ids), dtype=np.int64, count=len(entry_ids))
    order = np.argsort(group, kind="stable")
    counts = np.bincount(group, minlength=len(position))
    starts = np.zeros(len(position), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return order.astype(np.int64), list(position), starts


def best_chunk_scores(scores: npt.ArrayLike, starts: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """Vectorised :func:`best_per_entry` over rows grouped by :func:`group_rows`."""
    values = np.asarray(scores, dtype=np.float32)
    if values.size == 0:
        return np.zeros(0, dtype=np.float32)
    return np.asarray(np.maximum.reduceat(values, np.asarray(starts)), dtype=np.float32)


def as_vector_matrix(entry_id: str, vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """A stored entry's ``vectors`` as a non-empty float32 ``(chunks, dim)`` matrix (one
    vector = one chunk); anything else is refused naming the entry."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidInput(
            f"vectors of entry {entry_id!r} must be a non-empty 2-D array (chunks × dim); "
            f"got shape {array.shape}.",
            field="vectors",
        )
    return array
