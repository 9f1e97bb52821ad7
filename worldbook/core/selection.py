"""The world-book selection: which lore reaches the model this turn, and why (DESIGN §2).

:func:`select` is pure: the service resolves the books (entries in list order with ``tokens``
and ``indexed`` filled for the turn's tokenizer and embedding model) and the semantic hits, and
passes them in a :class:`~worldbook.core.types.Turn`. Steps, each citing its rule:

1. books: a book reached twice is used once (rule 2);
2. canon: packed book by book, list order, first entry always kept (rule 3);
3. whole books: a book whose when-relevant entries fit in what canon left goes in whole (rule 4);
4. large books share one per-turn budget: ranked literal hits, then semantic hits, then list
   order for books in fallback (rules 5–6; :mod:`worldbook.core.ranking`), up to N in full,
   the next as world-index lines plus lines for entries named inside the injected lore.

Disabled entries are dropped on entry to every step, so no path can surface them (rule 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

from worldbook.core.gist import index_line
from worldbook.core.matching import MatcherCache, match_form
from worldbook.core.ranking import Candidate, LargeBook, rank_candidates
from worldbook.core.tokens import Tokenizer
from worldbook.core.truncation import Cut, cut_to_tokens
from worldbook.core.types import (
    Decision,
    EntryRef,
    IndexLine,
    InjectedEntry,
    LoreBook,
    LoreEntry,
    ModelProfile,
    Selection,
    SelectionRules,
    TraceRecord,
    Turn,
    Via,
)


def canon_budget(input_window: int, rules: SelectionRules) -> int:
    """min(canon_share × input window, canon_cap), in whole tokens (DESIGN §2 budget table)."""
    return max(0, min(int(rules.canon_share * input_window), rules.canon_cap))


def _ref(entry: LoreEntry, book: LoreBook) -> EntryRef:
    return EntryRef(entry.id, book.id, entry.title, entry.tokens, book.character)


@dataclass
class _Draft:
    """The selection under construction."""

    trace: dict[tuple[str, str], TraceRecord] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    canon: list[InjectedEntry] = field(default_factory=list)
    canon_over: list[EntryRef] = field(default_factory=list)
    whole_books: list[str] = field(default_factory=list)
    injected: list[InjectedEntry] = field(default_factory=list)
    index: list[IndexLine] = field(default_factory=list)
    tokenizer_id: str = ""  # read once: adapters may build it on every access

    def record(self, entry_id: str, book_id: str, title: str, decision: Decision, why: str) -> None:
        # Keyed by entry, so a later decision (e.g. linked after ranked-out) replaces the earlier.
        self.trace[(book_id, entry_id)] = TraceRecord(entry_id, book_id, title, decision, why)


def select(
    turn: Turn,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    *,
    matcher_cache: MatcherCache | None = None,
) -> Selection:
    """Decide the lore of one turn by DESIGN §2.

    Args:
        turn: resolved books in turn order (story/novel books first, then each character's in
            cast order), messages oldest first, the model profile, and the semantic hits
            (nearest entries over the last ``rules.semantic_messages`` messages across all
            the turn's books, best first; entries of any book, the core filters them).
        rules: the budget table.
        tokenizer: the turn's tokenizer; ``LoreEntry.tokens`` must have been counted with it.
        matcher_cache: the process-wide literal-matcher cache; without one every book's
            automaton is rebuilt for this call (correct, but slow for large books).
    """
    draft = _Draft(tokenizer_id=tokenizer.id)
    cache = matcher_cache if matcher_cache is not None else MatcherCache(len(turn.books) or 1)
    books = _unique_books(turn, draft)

    budget = canon_budget(turn.profile.input_window, rules)
    canon_used = _pack_canon(books, budget, rules, cache, draft)
    left = max(0, budget - canon_used)
    large, left = _whole_books(books, left, cache, draft)
    per_turn_budget = max(0, min(rules.per_turn_cap, left))

    per_turn_used = 0
    if large:
        if per_turn_budget == 0:
            draft.notes.append(
                "No per-turn lore budget left after canon and whole books: large books add "
                "nothing this turn. Shorten canon or raise the model's input window."
            )
        per_turn_used = _large_books(turn, large, per_turn_budget, rules, tokenizer, cache, draft)

    characters = tuple(dict.fromkeys(b.character for b in turn.books if b.character is not None))
    return Selection(
        canon_budget=budget,
        canon_tokens=canon_used,
        canon=tuple(draft.canon),
        canon_over_budget=tuple(draft.canon_over),
        whole_books=tuple(draft.whole_books),
        per_turn_budget=per_turn_budget,
        injected=tuple(draft.injected),
        index=tuple(draft.index),
        trace=tuple(draft.trace.values()),
        supports_tools=turn.profile.supports_tools,
        notes=tuple(draft.notes),
        per_turn_tokens=per_turn_used,
        fallback_books=tuple(lb.book.id for lb in large if lb.fallback),
        characters=characters,
    )


def split_books(
    books: Sequence[LoreBook], profile: ModelProfile, rules: SelectionRules
) -> tuple[list[LoreBook], list[LoreBook]]:
    """The turn's books (deduplicated) as ``(whole, large)``, decided exactly as
    :func:`select` decides, so the service searches the vectors of large books only."""
    draft = _Draft()
    scratch = MatcherCache()
    unique = _unique_books(Turn(tuple(books), (), profile), draft)
    budget = canon_budget(profile.input_window, rules)
    left = max(0, budget - _pack_canon(unique, budget, rules, scratch, draft))
    large, _ = _whole_books(unique, left, scratch, draft)
    large_ids = {lb.book.id for lb in large}
    return [b for b in unique if b.id not in large_ids], [lb.book for lb in large]


def _unique_books(turn: Turn, draft: _Draft) -> list[LoreBook]:
    """DESIGN §2 rule 2: a book reached twice is used once, labelled by its first arrival."""
    seen: dict[str, LoreBook] = {}
    for book in turn.books:
        first = seen.get(book.id)
        if first is None:
            seen[book.id] = book
            continue
        via = f" via {book.character}" if book.character else ""
        kept = f" (kept for {first.character})" if first.character else ""
        # A book-level record: entry_id is empty (see docs/decisions.md).
        draft.record(
            "", book.id, book.title, Decision.LEFT_OUT, f"duplicate book: reached again{via}{kept}"
        )
        draft.notes.append(f"Book '{book.title}' is attached twice; it is used once.")
    return list(seen.values())


def _canon_entries(book: LoreBook) -> tuple[LoreEntry, ...]:
    return tuple(e for e in book.entries if e.enabled and e.canon)


def _pack_canon(
    books: list[LoreBook], budget: int, rules: SelectionRules, cache: MatcherCache, draft: _Draft
) -> int:
    """DESIGN §2 rule 3. Packing stops at the first entry that does not fit: canon is a
    strict prefix in book and list order, so reordering entries is how a user chooses."""
    used = 0
    full = False
    for book in books:
        for entry in cache.derived(book, ("canon",), partial(_canon_entries, book)):
            if not draft.canon or (not full and used + entry.tokens <= budget):
                why = "canon"
                if used + entry.tokens > budget:
                    why = (
                        f"canon: the first canon entry is always kept, although its "
                        f"{entry.tokens} tokens exceed the {budget}-token canon budget"
                    )
                draft.canon.append(
                    InjectedEntry(_ref(entry, book), entry.lore, Via.CANON, False, entry.tokens)
                )
                used += entry.tokens
                draft.record(entry.id, book.id, entry.title, Decision.CANON, why)
                continue
            full = True
            draft.canon_over.append(_ref(entry, book))
            draft.record(
                entry.id,
                book.id,
                entry.title,
                Decision.LEFT_OUT,
                f"canon over budget: {entry.tokens} tokens, {max(0, budget - used)} of the "
                f"{budget}-token canon budget left",
            )
    if draft.canon_over:
        draft.notes.append(
            f"{len(draft.canon_over)} canon entries are over the {budget}-token canon budget "
            "and are left out; shorten canon or reorder it."
        )
    if budget and used > rules.canon_heavy_share * budget:
        draft.notes.append(
            f"Core canon: {used} tokens every turn ({used * 100 // budget}% of the "
            f"{budget}-token canon budget)."
        )
    return used


def _relevant_size(book: LoreBook) -> tuple[int, int]:
    """How many enabled when-relevant entries the book has, and their tokens."""
    relevant = [e.tokens for e in book.entries if e.enabled and not e.canon]
    return len(relevant), sum(relevant)


def _whole_books(
    books: list[LoreBook], left: int, cache: MatcherCache, draft: _Draft
) -> tuple[list[LargeBook], int]:
    """DESIGN §2 rule 4: books in turn order, each whole book consuming what canon left."""
    large: list[LargeBook] = []
    for book in books:
        # The size depends on the book version and the tokenizer only. The index status does
        # not change the version, so unindexed entries are looked up every turn.
        size_key = ("size", draft.tokenizer_id)
        count, cost = cache.derived(book, size_key, partial(_relevant_size, book))
        if cost > left:
            unindexed = tuple(
                e for e in book.entries if not e.indexed and e.enabled and not e.canon
            )
            large.append(LargeBook(len(large), book, count, unindexed))
            continue
        relevant = [e for e in book.entries if e.enabled and not e.canon]
        left -= cost
        draft.whole_books.append(book.id)
        for entry in relevant:
            draft.injected.append(
                InjectedEntry(_ref(entry, book), entry.lore, Via.WHOLE_BOOK, False, entry.tokens)
            )
            draft.record(
                entry.id,
                book.id,
                entry.title,
                Decision.INJECTED,
                f"whole book: all {len(relevant)} entries ({cost} tokens) fit in what canon left",
            )
        if relevant:
            draft.notes.append(
                f"Whole book '{book.title}' travels in the stable prefix ({cost} tokens, "
                "cacheable)."
            )
    return large, left


def _large_books(
    turn: Turn,
    large: list[LargeBook],
    budget: int,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: MatcherCache,
    draft: _Draft,
) -> int:
    """DESIGN §2 rules 5–6: up to N ranked entries in full, then the world index."""
    first_per_turn_record = len(draft.trace)
    ranked = rank_candidates(turn, large, rules, cache, draft.record, draft.notes)
    remaining = budget
    injected_keys: set[tuple[str, str]] = set()
    per_turn: list[InjectedEntry] = []
    not_full: list[tuple[int, Candidate, str]] = []  # (overall rank, candidate, why not full)

    # Full entries come from the slots the ranking shows at all (full + index topics): an
    # entry ranked below every slot does not jump ahead of the index because it is short.
    window = rules.full_entries_max + rules.index_topics_max
    for rank, cand in enumerate(ranked):
        if len(per_turn) >= rules.full_entries_max or rank >= window:
            not_full.append((rank, cand, f"{rules.full_entries_max} full-entry slots taken"))
            continue
        entry = cand.entry
        cap = rules.full_entry_tokens_max
        cut = _cut(cand.book, entry, cap, tokenizer, draft.tokenizer_id, cache)
        if cut.tokens > remaining and _named(cand) and remaining >= rules.named_cut_min_tokens:
            # DESIGN §2 rule 5, last point: an entry named explicitly is cut to what is left
            # rather than pushed to the index by entries ranked below it.
            cut = _cut(cand.book, entry, remaining, tokenizer, draft.tokenizer_id, cache)
        if cut.tokens > remaining:
            not_full.append((rank, cand, f"{cut.tokens} tokens in full, {remaining} left"))
            continue
        remaining -= cut.tokens
        ref = _ref(entry, cand.book)
        per_turn.append(InjectedEntry(ref, cut.text, cand.via, cut.truncated, cut.tokens))
        injected_keys.add((cand.book.id, entry.id))
        cut_note = f"; cut to {cut.tokens} tokens" if cut.truncated else ""
        draft.record(entry.id, cand.book.id, entry.title, Decision.INJECTED, cand.why + cut_note)
    draft.injected.extend(per_turn)

    # The next `index_topics_max` ranked entries are the topics; a line that does not fit is
    # over budget and the slot is not handed further down (lines are all about as long).
    listed: set[tuple[str, str]] = set(injected_keys)
    for slot, (rank, cand, why_not_full) in enumerate(not_full):
        entry = cand.entry
        if slot >= rules.index_topics_max:
            draft.record(
                entry.id,
                cand.book.id,
                entry.title,
                Decision.LEFT_OUT,
                f"{cand.why}; not relevant enough: ranked #{rank + 1}, "
                f"after the {rules.index_topics_max} index topics",
            )
            continue
        index_why = f"; world index ({why_not_full})"
        added = _add_line(
            cand.book, entry, cand.why, index_why, False, remaining, rules, tokenizer, cache, draft
        )
        remaining -= added
        if added:
            listed.add((cand.book.id, entry.id))

    remaining -= _add_linked(per_turn, large, remaining, listed, rules, tokenizer, cache, draft)
    # Records made from here on are all about when-relevant entries of large books.
    per_turn_keys = list(draft.trace)[first_per_turn_record:]
    for lb in large:
        traced = {entry_id for book_id, entry_id in per_turn_keys if book_id == lb.book.id}
        for rec in lb.summarise(traced):
            # Book-level summaries get their own key so they never replace a duplicate-book record.
            draft.trace[(rec.book_id, rec.entry_id or "#summary")] = rec
    return budget - remaining


def _named(cand: Candidate) -> bool:
    """Whether the candidate was named explicitly (a literal title/alias hit)."""
    return cand.via is Via.LITERAL


def _cut(
    book: LoreBook,
    entry: LoreEntry,
    cap: int,
    tokenizer: Tokenizer,
    tokenizer_id: str,
    cache: MatcherCache,
) -> Cut:
    """The entry cut to ``cap`` tokens, remembered per book version (tokenising is the cost)."""
    key = ("cut", entry.id, tokenizer_id, str(cap))
    return cache.derived(book, key, lambda: cut_to_tokens(entry.lore, cap, tokenizer, entry.tokens))


def _add_line(
    book: LoreBook,
    entry: LoreEntry,
    why: str,
    index_why: str,
    linked: bool,
    remaining: int,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: MatcherCache,
    draft: _Draft,
) -> int:
    """Add one world-index line if it fits; return the tokens it used (0 if it did not)."""
    gist_cap = rules.index_gist_tokens_max

    def make_line() -> tuple[str, int]:
        line = index_line(entry.title, entry.lore, tokenizer, gist_cap)
        return line, tokenizer.count(line)

    key = ("line", entry.id, draft.tokenizer_id, str(gist_cap))
    line, cost = cache.derived(book, key, make_line)
    if cost > remaining:
        draft.record(
            entry.id,
            book.id,
            entry.title,
            Decision.LEFT_OUT,
            f"{why}; over budget: index line {cost} tokens, {remaining} left",
        )
        return 0
    draft.index.append(IndexLine(_ref(entry, book), line, linked, cost))
    draft.record(entry.id, book.id, entry.title, Decision.INDEXED, why + index_why)
    return cost


def _add_linked(
    per_turn: list[InjectedEntry],
    large: list[LargeBook],
    remaining: int,
    listed: set[tuple[str, str]],
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: MatcherCache,
    draft: _Draft,
) -> int:
    """Index lines for entries named inside the injected lore (any large book of the turn).

    The first `index_linked_max` named entries not listed yet (injected order, then order of
    appearance) are considered, each fits or is over budget; scanning stops there.
    """
    used = 0
    considered = 0
    for source in per_turn:
        text = match_form(source.text)
        for lb in large:
            for match in cache.get(lb.book).find(text, prepared=True):
                entry = lb.entry_at(match.position, match.entry_id)
                key = (lb.book.id, match.entry_id)
                if entry is None or key in listed:
                    continue
                if considered >= rules.index_linked_max:
                    return used
                listed.add(key)
                considered += 1
                why = f"linked: named as '{match.alias}' in '{source.ref.title}'"
                used += _add_line(
                    lb.book, entry, why, "", True, remaining - used, rules, tokenizer, cache, draft
                )
    return used
