"""The peers' selection methods, re-implemented from their documented behaviour.

Nothing here is copied from another project: each function follows the behaviour described in
``../shared/docs/peers.md`` (§1.1 SillyTavern World Info, §1.2 SillyTavern Vector Storage),
which cites the SillyTavern documentation and source it was read from. Only the parts that
matter for which entries reach the model are modelled (no recursion, groups, probability,
timed effects, which the sample turns do not exercise).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from worldbook.ports import Vectors

ST_SCAN_DEPTH = 2  # peers.md §1.1: "scan depth; default 2"
ST_BUDGET_SHARE = 0.25  # §1.1: world_info_budget default 25 % of the context
ST_VECTOR_MESSAGES = 2  # §1.2: "the last `query` messages (default 2)"
ST_VECTOR_TOP_K = 5  # §1.2: max_entries default 5
ST_VECTOR_THRESHOLD = 0.25  # §1.2: score_threshold default 0.25


@dataclass(frozen=True, slots=True)
class PeerEntry:
    """An entry as a keyword lorebook sees it (SillyTavern World Info fields)."""

    title: str
    content: str
    tokens: int
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    selective_logic: int = 0  # 0 AND ANY, 1 NOT ALL, 2 NOT ANY, 3 AND ALL
    constant: bool = False
    order: int = 100
    enabled: bool = True


_REGEX_KEY = re.compile(r"^/(.+)/([a-z]*)$", re.DOTALL)


class KeyMatcher:
    """One SillyTavern key, compiled once per book (the generous form of the baseline).

    §1.1: keys are case-insensitive by default; ``/pattern/flags`` is a regex; with whole words
    on, a single-word key matches as ``(?:^|\\W)key(?:$|\\W)`` and a multi-word key falls back
    to a substring test. ``\\W`` is ASCII-only as in JavaScript without the ``u`` flag, so every
    non-ASCII letter counts as a boundary: a Cyrillic key fires inside a longer word and a CJK
    key inside running text, as the survey notes of the original.
    """

    __slots__ = ("_needle", "_raw", "_regex")

    def __init__(self, key: str) -> None:
        self._regex: re.Pattern[str] | None = None
        self._needle: str | None = None
        self._raw = False  # regex keys see the text as written, the others its lower case
        found = _REGEX_KEY.match(key)
        if found:
            flags = re.IGNORECASE if "i" in found.group(2) else 0
            try:
                self._regex = re.compile(found.group(1), flags)
                self._raw = True
            except re.error:
                self._needle = key.lower()
        elif " " in key.strip():
            self._needle = key.strip().lower()
        else:
            pattern = r"(?:^|\W)" + re.escape(key.strip().lower()) + r"(?:$|\W)"
            self._regex = re.compile(pattern, re.ASCII)

    def search(self, lower: str, raw: str) -> bool:
        """``lower`` is the lower-cased scan buffer, ``raw`` the buffer as written."""
        if self._regex is not None:
            return self._regex.search(raw if self._raw else lower) is not None
        return self._needle is not None and self._needle in lower


class KeywordScan:
    """SillyTavern-style World Info activation over one book (§1.1).

    Scan buffer: the last ``ST_SCAN_DEPTH`` messages joined; constant entries always; an entry
    fires when a primary key matches and its optional filter (secondary keys) agrees; then the
    budget: constants first, then descending ``order``, stop at the first entry that would
    overflow (nothing after it is tried).
    """

    def __init__(self, entries: Sequence[PeerEntry]) -> None:
        self.entries = [e for e in entries if e.enabled]
        self._keys = [[KeyMatcher(k) for k in e.keys if k.strip()] for e in self.entries]
        self._secondary = [
            [KeyMatcher(k) for k in e.secondary_keys if k.strip()] for e in self.entries
        ]

    def activated(self, messages: Sequence[str]) -> list[int]:
        """Indexes (into ``self.entries``) of entries whose keys fire, before the budget."""
        raw = "\n".join(messages[-ST_SCAN_DEPTH:])
        buffer = raw.lower()
        fired: list[int] = []
        for i, entry in enumerate(self.entries):
            if entry.constant:
                fired.append(i)
                continue
            if not any(k.search(buffer, raw) for k in self._keys[i]):
                continue
            if self._secondary[i] and not _filter_ok(
                [k.search(buffer, raw) for k in self._secondary[i]], entry.selective_logic
            ):
                continue
            fired.append(i)
        return fired

    def select(self, messages: Sequence[str], budget: int) -> list[PeerEntry]:
        return budget_by_order([self.entries[i] for i in self.activated(messages)], budget)

    def activated_recursive(
        self, messages: Sequence[str], scan_depth: int, max_passes: int = 3
    ) -> list[int]:
        """The same scan with SillyTavern's recursion (§1.1): each pass tests every key of every
        entry not yet activated against the last ``scan_depth`` messages plus the content of the
        entries activated so far, until a pass adds nothing or ``max_passes`` passes ran."""
        raw = "\n".join(messages[-scan_depth:]) if scan_depth > 0 else ""
        fired: list[int] = []
        done: set[int] = set()
        for _ in range(max_passes):
            buffer = raw.lower()
            new: list[int] = []
            for i, entry in enumerate(self.entries):
                if i in done:
                    continue
                if entry.constant or self._fires(i, buffer, raw):
                    new.append(i)
            if not new:
                break
            done.update(new)
            fired += new
            raw = "\n".join([raw, *(self.entries[i].content for i in new)])
        return fired

    def _fires(self, i: int, buffer: str, raw: str) -> bool:
        if not any(k.search(buffer, raw) for k in self._keys[i]):
            return False
        if not self._secondary[i]:
            return True
        hits = [k.search(buffer, raw) for k in self._secondary[i]]
        return _filter_ok(hits, self.entries[i].selective_logic)


def _filter_ok(hits: list[bool], logic: int) -> bool:
    if logic == 1:  # NOT ALL
        return not all(hits)
    if logic == 2:  # NOT ANY
        return not any(hits)
    if logic == 3:  # AND ALL
        return all(hits)
    return any(hits)  # AND ANY


def budget_by_order(active: Sequence[PeerEntry], budget: int) -> list[PeerEntry]:
    """§1.1 budget: constants first, then larger ``order``; stop at the first overflow."""
    ranked = sorted(active, key=lambda e: (not e.constant, -e.order))
    kept: list[PeerEntry] = []
    used = 0
    for entry in ranked:
        if used + entry.tokens > budget:
            break
        kept.append(entry)
        used += entry.tokens
    return kept


def st_budget(input_window: int) -> int:
    return round(ST_BUDGET_SHARE * input_window)


def vector_storage_ranking(
    entry_vectors: Vectors, query_vector: Vectors
) -> list[tuple[int, float]]:
    """§1.2 ranking: cosine of the query against one vector per entry content, top
    ``ST_VECTOR_TOP_K`` that score at least ``ST_VECTOR_THRESHOLD``, best first."""
    if entry_vectors.shape[0] == 0:
        return []
    scores = entry_vectors @ np.asarray(query_vector, dtype=np.float32).reshape(-1)
    order = np.argsort(-scores, kind="stable")[:ST_VECTOR_TOP_K]
    return [(int(i), float(scores[i])) for i in order if scores[i] >= ST_VECTOR_THRESHOLD]


def vector_storage_query(messages: Sequence[str]) -> str:
    """§1.2 query: the last ``ST_VECTOR_MESSAGES`` messages, joined."""
    return "\n".join(messages[-ST_VECTOR_MESSAGES:])


class VectorStorage:
    """SillyTavern Vector Storage for World Info (§1.2), with "Enabled for all entries".

    One vector per entry *content* (no title, no keys, no chunking); hits are force-activated
    and then go through the ordinary World Info budget like keyword hits. Constant entries
    still go in (they are World Info, not retrieval).
    """

    def __init__(
        self, entries: Sequence[PeerEntry], embed_passages: Callable[[list[str]], Vectors]
    ) -> None:
        self.entries = [e for e in entries if e.enabled]
        self._vectors = embed_passages([e.content for e in self.entries])

    def select(
        self, messages: Sequence[str], embed_query: Callable[[str], Vectors], budget: int
    ) -> list[PeerEntry]:
        hits = vector_storage_ranking(self._vectors, embed_query(vector_storage_query(messages)))
        active = [e for e in self.entries if e.constant]
        active += [self.entries[i] for i, _ in hits if not self.entries[i].constant]
        return budget_by_order(active, budget)


def list_order(entries: Sequence[PeerEntry], budget: int) -> list[PeerEntry]:
    """The no-retrieval baseline: enabled entries in list order until the budget overflows."""
    kept: list[PeerEntry] = []
    used = 0
    for entry in entries:
        if not entry.enabled:
            continue
        if used + entry.tokens > budget:
            break
        kept.append(entry)
        used += entry.tokens
    return kept
