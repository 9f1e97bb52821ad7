"""Ranking the candidates of the large books of a turn (DESIGN §2 rules 5–6).

Order: literal hits (user message first, then the character's replies; capped; each group by
relevance: meaning score, then the newer message), then semantic hits by score, then — for
books in fallback — plain list order. Ties are broken by book order, then list position, then
id, so the same turn always ranks the same way (rule 10).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial

from worldbook.core.matching import Matchers, match_form
from worldbook.core.stemming import stem_index
from worldbook.core.types import (
    Decision,
    LoreBook,
    LoreEntry,
    Message,
    SelectionRules,
    TraceRecord,
    Turn,
    Via,
)

Record = Callable[[str, str, str, Decision, str], None]
"""``record(entry_id, book_id, title, decision, reason)`` — adds or replaces a trace record."""

_SortKey = tuple[float, int, int, str]
_LiteralKey = tuple[float, int, int, int, str]
"""(minus the meaning score, or +inf without one; source: 0 = the user message, then replies
newest first; book order; list position; id)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ranked entry and the reason it ranked (the start of its trace reason)."""

    book: LoreBook
    entry: LoreEntry
    via: Via
    why: str
    score: float | None = None  # the meaning score, for candidates ranked by meaning
    lift: float = 0.0  # the part of the score the referent links added (SemanticHit.lift)

    @property
    def plain(self) -> float | None:
        """The meaning score without the links' lift (what the full-score share compares)."""
        return None if self.score is None else self.score - self.lift


@dataclass(slots=True)
class LargeBook:
    """A book too large to travel whole; ``position`` is its order among large books."""

    position: int
    book: LoreBook
    relevant_count: int  # enabled when-relevant entries
    unindexed: tuple[LoreEntry, ...] = ()  # the enabled when-relevant ones without a vector
    matched: bool = False
    fallback: bool = False

    def entry_at(self, position: int, entry_id: str) -> LoreEntry | None:
        """The enabled when-relevant entry at ``position`` if it still has ``entry_id``."""
        entries = self.book.entries
        if 0 <= position < len(entries):
            entry = entries[position]
            if entry.id == entry_id and entry.enabled and not entry.canon:
                return entry
        return None

    def summarise(self, traced: set[str]) -> list[TraceRecord]:
        """Trace the entries no step looked at: one record each for entries not indexed yet
        (outside fallback), one book-level record (``entry_id == ""``) counting the rest.

        ``traced`` holds the ids of this book's when-relevant entries already traced.
        """
        book = self.book
        records: list[TraceRecord] = []
        if not self.fallback:
            records = [
                TraceRecord(
                    entry.id,
                    book.id,
                    entry.title,
                    Decision.LEFT_OUT,
                    "not indexed yet: meaning search cannot find it until background "
                    "indexing finishes",
                )
                for entry in self.unindexed
                if entry.id not in traced
            ]
        rest = self.relevant_count - len(traced) - len(records)
        if rest:
            why = (
                "beyond the list-order slots (book in fallback: not mostly indexed)"
                if self.fallback
                else "not relevant enough: no literal or semantic match this turn"
            )
            records.append(
                TraceRecord("", book.id, book.title, Decision.LEFT_OUT, f"{rest} entries: {why}")
            )
        return records


def _replies(messages: tuple[Message, ...], character: str | None, count: int = 2) -> list[int]:
    """Indexes of the character's last ``count`` assistant replies, newest first.

    A reply counts when the book has no character (a story book: anyone's reply), when the
    message has no speaker name (a one-character chat), or when the names match (casefold).
    """
    wanted = character.casefold() if character else None
    found: list[int] = []
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if msg.role != "assistant":
            continue
        if wanted is None or msg.name is None or msg.name.casefold() == wanted:
            found.append(i)
            if len(found) == count:
                break
    return found


def rank_candidates(
    turn: Turn,
    large: list[LargeBook],
    rules: SelectionRules,
    cache: Matchers,
    record: Record,
    notes: list[str],
) -> list[Candidate]:
    """Every candidate of the large books, best first; records why capped ones were dropped."""
    ranked = _Ranked()
    user_hits, reply_hits = _literal_hits(turn, large, rules, cache)
    _take_literals(user_hits, reply_hits, rules, ranked, record)
    for cand in _semantic(turn, large, cache, record):
        if (cand.book.id, cand.entry.id) not in ranked.taken:
            ranked.take(cand)
    _fallback(large, rules, ranked, notes)
    return ranked.items


class _Ranked:
    """The ranking so far: candidates in order, and which (book, entry) pairs are in it."""

    def __init__(self) -> None:
        self.items: list[Candidate] = []
        self.taken: set[tuple[str, str]] = set()

    def take(self, cand: Candidate) -> None:
        self.items.append(cand)
        self.taken.add((cand.book.id, cand.entry.id))


Hits = list[tuple[_LiteralKey, Candidate]]


def _literal_hits(
    turn: Turn, large: list[LargeBook], rules: SelectionRules, cache: Matchers
) -> tuple[Hits, Hits]:
    """Entries named in the last user message, and (not already named there) in the book's
    character's last two replies; each book's ``matched`` flag is set.

    Each hit carries its relevance (ADR 0013): the entry's meaning score for the
    conversation when it is among the semantic hits, then how recent the naming message is."""
    messages = turn.messages
    user_idx = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None
    )
    normalised: dict[int, str] = {}

    def norm(i: int) -> str:
        if i not in normalised:
            normalised[i] = match_form(messages[i].content)
        return normalised[i]

    user_hits: Hits = []
    reply_hits: Hits = []
    scores = _meaning_scores(turn)
    lifts = {(h.book_id, h.entry_id): h.lift for h in reversed(turn.semantic_hits)}  # first wins
    for lb in large:
        named: set[str] = set()
        sources = [(user_idx, "in the last user message")] if user_idx is not None else []
        for i in _replies(messages, lb.book.character):
            who = messages[i].name or lb.book.character or "the character"
            sources.append((i, f"in {who}'s reply"))
        for source, (i, where) in enumerate(sources):
            hits = user_hits if i == user_idx else reply_hits
            for position, entry_id, naming in _names(
                lb, norm(i), messages[i].content, rules, cache
            ):
                entry = lb.entry_at(position, entry_id)
                if entry is not None and entry.id not in named:
                    named.add(entry.id)
                    why = f"literal: named as {naming} {where}"
                    score = scores.get((lb.book.id, entry.id)) if entry.indexed else None
                    lift = lifts.get((lb.book.id, entry.id), 0.0) if score is not None else 0.0
                    cand = Candidate(lb.book, entry, Via.LITERAL, why, score, lift)
                    relevance = -score if score is not None else math.inf
                    key = (relevance, source, lb.position, position, entry.id)
                    hits.append((key, cand))
        lb.matched = bool(named)
    return user_hits, reply_hits


def _names(
    lb: LargeBook, prepared: str, text: str, rules: SelectionRules, cache: Matchers
) -> Iterator[tuple[int, str, str]]:
    """(list position, entry id, how it was named) for every name in a message: exact
    title/alias hits, then — when stemmers are configured — inflected forms
    (:mod:`worldbook.core.stemming`)."""
    for m in cache.get(lb.book).find(prepared, prepared=True):
        yield m.position, m.entry_id, f"'{m.alias}'"
    for language in rules.literal_stem_languages:
        build = partial(stem_index, lb.book, language)
        index = cache.derived(lb.book, ("stems", language), build)
        for h in index.find(text):
            yield h.position, h.entry_id, f"'{h.alias}' (inflected: '{h.form}')"


def _meaning_scores(turn: Turn) -> dict[tuple[str, str], float]:
    """The meaning score of every entry among the turn's semantic hits (first hit wins)."""
    scores: dict[tuple[str, str], float] = {}
    for hit in turn.semantic_hits:
        scores.setdefault((hit.book_id, hit.entry_id), hit.score)
    return scores


def _take_literals(
    user_hits: Hits, reply_hits: Hits, rules: SelectionRules, ranked: _Ranked, record: Record
) -> None:
    """DESIGN §2 rule 5 caps: at most ``literal_max``, of them at most
    ``literal_from_replies_max`` from replies; the user's message first. Within each group the
    names the conversation is most about come first (meaning score, then the newer message),
    not the first in book order."""

    def over_cap(cand: Candidate) -> None:
        e = cand.entry
        cap = f"{rules.literal_max}, at most {rules.literal_from_replies_max} from replies"
        record(
            e.id,
            cand.book.id,
            e.title,
            Decision.LEFT_OUT,
            f"{cand.why}; over the literal cap ({cap})",
        )

    for _, cand in sorted(user_hits, key=lambda h: h[0]):
        if len(ranked.items) < rules.literal_max:
            ranked.take(cand)
        else:
            over_cap(cand)
    from_replies = 0
    for _, cand in sorted(reply_hits, key=lambda h: h[0]):
        if len(ranked.items) < rules.literal_max and from_replies < rules.literal_from_replies_max:
            ranked.take(cand)
            from_replies += 1
        else:
            over_cap(cand)


def _fallback(
    large: list[LargeBook], rules: SelectionRules, ranked: _Ranked, notes: list[str]
) -> None:
    """DESIGN §2 rule 6: a large book that is not mostly indexed and matched nothing this
    turn offers its entries in plain list order."""
    slots = rules.full_entries_max + rules.index_topics_max
    for lb in large:
        if lb.matched:
            continue
        share = lb.book.indexed_share()
        if share >= rules.mostly_indexed_share:
            continue
        lb.fallback = True
        notes.append(
            f"'{lb.book.title}' is {share:.0%} indexed and nothing matched this turn: using "
            "list order until background indexing catches up."
        )
        why = f"order: book {share:.0%} indexed and no match this turn (fallback)"
        added = 0
        for entry in lb.book.entries:
            if added >= slots:
                break
            if entry.enabled and not entry.canon and (lb.book.id, entry.id) not in ranked.taken:
                ranked.take(Candidate(lb.book, entry, Via.ORDER, why))
                added += 1


def _semantic(
    turn: Turn, large: list[LargeBook], cache: Matchers, record: Record
) -> list[Candidate]:
    """Usable semantic hits of large books, by score then book order, list position, id.

    Only entries with a current vector (``indexed``) may rank by meaning (DESIGN §2 rule 6).
    """
    by_id = {lb.book.id: lb for lb in large}
    hits: list[tuple[_SortKey, Candidate]] = []
    seen: set[tuple[str, str]] = set()
    for hit in turn.semantic_hits:
        lb = by_id.get(hit.book_id)
        if lb is None or (hit.book_id, hit.entry_id) in seen:
            continue
        position = cache.get(lb.book).positions.get(hit.entry_id, -1)
        entry = lb.entry_at(position, hit.entry_id)
        if entry is None:
            continue  # unknown, disabled or canon: never surfaces from a hit
        seen.add((hit.book_id, hit.entry_id))
        if not entry.indexed:
            record(
                entry.id,
                lb.book.id,
                entry.title,
                Decision.LEFT_OUT,
                "not indexed yet: its stored vector is not current, so it cannot rank by meaning",
            )
            continue
        lb.matched = True
        why = f"semantic: score {hit.score:.3f}"
        if hit.gloss:  # ADR 0023: a generated view found it, not the author's words
            why += f" (through its generated {hit.gloss} gloss)"
        hits.append(
            (
                (-hit.score, lb.position, position, entry.id),
                Candidate(lb.book, entry, Via.SEMANTIC, why, hit.score, hit.lift),
            )
        )
    hits.sort(key=lambda h: h[0])
    return [cand for _, cand in hits]
