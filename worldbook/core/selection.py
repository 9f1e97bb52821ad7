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

from dataclasses import replace
from functools import partial

from worldbook.core.matching import Matchers, TurnMatchers
from worldbook.core.per_turn import large_books_lore
from worldbook.core.ranking import LargeBook
from worldbook.core.selection_draft import SelectionDraft, ref_of
from worldbook.core.tokens import Tokenizer
from worldbook.core.types import (
    Decision,
    InjectedEntry,
    LoreBook,
    LoreEntry,
    LoreText,
    Selection,
    SelectionRules,
    SemanticHit,
    SemanticSearch,
    Turn,
    Via,
)


def canon_budget(input_window: int, rules: SelectionRules) -> int:
    """min(canon_share × input window, canon_cap), in whole tokens (DESIGN §2 budget table)."""
    return max(0, min(int(rules.canon_share * input_window), rules.canon_cap))


def select(
    turn: Turn,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    *,
    matcher_cache: Matchers | None = None,
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
    draft = SelectionDraft(tokenizer_id=tokenizer.id)
    cache = matcher_cache if matcher_cache is not None else TurnMatchers()
    books = _unique_books(turn, draft)

    budget = canon_budget(turn.profile.input_window, rules)
    canon_used = _pack_canon(books, budget, rules, cache, draft)
    left = max(0, budget - canon_used)
    large, left = _whole_books(books, left, cache, draft)
    per_turn_budget = max(0, min(rules.per_turn_cap, left))

    if turn.search is not None:
        turn = replace(turn, semantic_hits=_search(turn.search, large))
    per_turn_used = 0
    if large:
        if per_turn_budget == 0:
            draft.notes.append(
                "No per-turn lore budget left after canon and whole books: large books add "
                "nothing this turn. Shorten canon or raise the model's input window."
            )
        per_turn_used = large_books_lore(
            turn, large, per_turn_budget, rules, tokenizer, cache, draft
        )

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


def _search(search: SemanticSearch, large: list[LargeBook]) -> tuple[SemanticHit, ...]:
    """DESIGN §2 rule 5, "close in meaning": only books that will not travel whole and have
    an enabled entry with a vector are searched; none, and nothing is embedded."""
    searchable = tuple(
        lb.book.id for lb in large if any(e.indexed and e.enabled for e in lb.book.entries)
    )
    return search(searchable) if searchable else ()


def _unique_books(turn: Turn, draft: SelectionDraft) -> list[LoreBook]:
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
    books: list[LoreBook],
    budget: int,
    rules: SelectionRules,
    cache: Matchers,
    draft: SelectionDraft,
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
                    InjectedEntry(ref_of(entry, book), LoreText.whole(entry), Via.CANON)
                )
                used += entry.tokens
                draft.record(entry.id, book.id, entry.title, Decision.CANON, why)
                continue
            full = True
            draft.canon_over.append(ref_of(entry, book))
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
    books: list[LoreBook], left: int, cache: Matchers, draft: SelectionDraft
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
                InjectedEntry(ref_of(entry, book), LoreText.whole(entry), Via.WHOLE_BOOK)
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
