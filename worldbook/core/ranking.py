"""Ranking the candidates of the large books of a turn (DESIGN §2 rules 5–6).

Order: literal hits (user message first, then the character's replies; capped), then semantic
hits by score, then — for books in fallback — plain list order. Ties are broken by book order,
then list position, then id, so the same turn always ranks the same way (rule 10).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from worldbook.core.matching import MatcherCache, match_form
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


@dataclass(frozen=True, slots=True)
class Candidate:
    """A ranked entry and the reason it ranked (the start of its trace reason)."""

    book: LoreBook
    entry: LoreEntry
    via: Via
    why: str


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
    cache: MatcherCache,
    record: Record,
    notes: list[str],
) -> list[Candidate]:
    """Every candidate of the large books, best first; records why capped ones were dropped."""
    messages = turn.messages
    user_idx = next(
        (i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), None
    )
    normalised: dict[int, str] = {}

    def norm(i: int) -> str:
        if i not in normalised:
            normalised[i] = match_form(messages[i].content)
        return normalised[i]

    user_hits: list[tuple[_SortKey, Candidate]] = []
    reply_hits: list[tuple[_SortKey, Candidate]] = []
    for lb in large:
        matcher = cache.get(lb.book)
        in_user: set[str] = set()
        if user_idx is not None:
            for m in matcher.find(norm(user_idx), prepared=True):
                entry = lb.entry_at(m.position, m.entry_id)
                if entry is not None:
                    in_user.add(entry.id)
                    why = f"literal: named as '{m.alias}' in the last user message"
                    cand = Candidate(lb.book, entry, Via.LITERAL, why)
                    user_hits.append(((0.0, lb.position, m.position, entry.id), cand))
        for i in _replies(messages, lb.book.character):
            who = messages[i].name or lb.book.character or "the character"
            for m in matcher.find(norm(i), prepared=True):
                entry = lb.entry_at(m.position, m.entry_id)
                if entry is not None and entry.id not in in_user:
                    in_user.add(entry.id)
                    why = f"literal: named as '{m.alias}' in {who}'s reply"
                    cand = Candidate(lb.book, entry, Via.LITERAL, why)
                    reply_hits.append(((0.0, lb.position, m.position, entry.id), cand))
        lb.matched = bool(in_user)

    ranked: list[Candidate] = []
    taken: set[tuple[str, str]] = set()

    def take(cand: Candidate) -> None:
        ranked.append(cand)
        taken.add((cand.book.id, cand.entry.id))

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
        if len(ranked) < rules.literal_max:
            take(cand)
        else:
            over_cap(cand)
    from_replies = 0
    for _, cand in sorted(reply_hits, key=lambda h: h[0]):
        if len(ranked) < rules.literal_max and from_replies < rules.literal_from_replies_max:
            take(cand)
            from_replies += 1
        else:
            over_cap(cand)

    for cand in _semantic(turn, large, cache, record):
        if (cand.book.id, cand.entry.id) not in taken:
            take(cand)

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
            if entry.enabled and not entry.canon and (lb.book.id, entry.id) not in taken:
                take(Candidate(lb.book, entry, Via.ORDER, why))
                added += 1
    return ranked


def _semantic(
    turn: Turn, large: list[LargeBook], cache: MatcherCache, record: Record
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
        hits.append(
            (
                (-hit.score, lb.position, position, entry.id),
                Candidate(lb.book, entry, Via.SEMANTIC, why),
            )
        )
    hits.sort(key=lambda h: h[0])
    return [cand for _, cand in hits]
