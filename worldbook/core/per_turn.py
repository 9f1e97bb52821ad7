"""The per-turn lore of large books (DESIGN §2 rules 5–6): ranked candidates in full within
the per-turn budget, then the world index, then lines for entries the injected lore names."""

from __future__ import annotations

from dataclasses import dataclass

from worldbook.core.gist import index_line
from worldbook.core.matching import Matchers, match_form
from worldbook.core.ranking import Candidate, LargeBook, rank_candidates
from worldbook.core.selection_draft import SelectionDraft, ref_of
from worldbook.core.tokens import Tokenizer
from worldbook.core.truncation import cut_to_tokens
from worldbook.core.types import (
    Decision,
    IndexLine,
    InjectedEntry,
    LoreBook,
    LoreEntry,
    LoreText,
    SelectionRules,
    Turn,
    Via,
)


def large_books_lore(
    turn: Turn,
    large: list[LargeBook],
    budget: int,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: Matchers,
    draft: SelectionDraft,
) -> int:
    """DESIGN §2 rules 5–6: up to N ranked entries in full, then the world index. Returns the
    tokens used of ``budget``."""
    first_per_turn_record = len(draft.trace)
    ranked = rank_candidates(turn, large, rules, cache, draft.record, draft.notes)
    step = _Budget(budget, rules, tokenizer, cache, draft)
    per_turn, not_full = _fill_full(ranked, step)
    draft.injected.extend(per_turn)
    listed = {(e.ref.book_id, e.ref.entry_id) for e in per_turn}
    _fill_index(not_full, step, listed)
    step.remaining -= _add_linked(
        per_turn, large, step.remaining, listed, rules, tokenizer, cache, draft
    )
    # Records made from here on are all about when-relevant entries of large books.
    per_turn_keys = list(draft.trace)[first_per_turn_record:]
    for lb in large:
        traced = {entry_id for book_id, entry_id in per_turn_keys if book_id == lb.book.id}
        for rec in lb.summarise(traced):
            # Book-level summaries get their own key so they never replace a duplicate-book record.
            draft.trace[(rec.book_id, rec.entry_id or "#summary")] = rec
    return budget - step.remaining


@dataclass(slots=True)
class _Budget:
    """What is left of the per-turn budget, with what every step needs to spend it."""

    remaining: int
    rules: SelectionRules
    tokenizer: Tokenizer
    cache: Matchers
    draft: SelectionDraft

    def cut(self, cand: Candidate, cap: int) -> LoreText:
        return _cut(cand.book, cand.entry, cap, self.tokenizer, self.draft.tokenizer_id, self.cache)

    def lines_cost(self, below: list[Candidate]) -> int:
        """Tokens the world-index lines of these candidates would take."""
        rules, tokenizer, tokenizer_id = self.rules, self.tokenizer, self.draft.tokenizer_id
        return sum(
            _line(c.book, c.entry, rules, tokenizer, tokenizer_id, self.cache)[1] for c in below
        )


NotFull = list[tuple[int, Candidate, str]]
"""(overall rank, candidate, why it is not in full)."""


def _fill_full(ranked: list[Candidate], step: _Budget) -> tuple[list[InjectedEntry], NotFull]:
    """The full slots: ranked candidates in order while they fit (named ones cut to fit).

    How the budget is shared with the world index (ADR 0013): an entry ranked by
    meaning goes in full only if its score is at least ``full_score_share`` of the turn's best
    meaning score (a weak match is listed, not injected), and an entry not named explicitly goes
    in full only if the index lines of the entries already pushed to the index and of the next
    ``index_reserve_lines`` ranks still fit after it."""
    rules, draft = step.rules, step.draft
    per_turn: list[InjectedEntry] = []
    not_full: NotFull = []
    # Full entries come from the slots the ranking shows at all (full + index topics): an
    # entry ranked below every slot does not jump ahead of the index because it is short.
    window = rules.full_entries_max + rules.index_topics_max
    # The best is what the messages say (ADR 0021): a referent link's lift ranks an entry but
    # does not raise the bar for the turn's other topics.
    best = max((c.plain for c in ranked[:window] if c.plain is not None), default=None)
    pushed = 0  # tokens of the index lines of the entries pushed to the index so far
    for rank, cand in enumerate(ranked):
        if len(per_turn) >= rules.full_entries_max or rank >= window:
            not_full.append((rank, cand, f"{rules.full_entries_max} full-entry slots taken"))
            continue
        cut = step.cut(cand, rules.full_entry_tokens_max)
        left, kept = step.remaining, ""
        if rules.index_reserve_lines and not _named(cand):
            # A named entry may use the room kept for the index (DESIGN §2 rule 5: never
            # pushed out by entries ranked below it).
            below = ranked[rank + 1 : min(window, rank + 1 + rules.index_reserve_lines)]
            reserve = pushed + step.lines_cost(below)
            left, kept = left - reserve, f" after {reserve} kept for index lines"
        if cut.tokens > left and _named(cand) and left >= rules.named_cut_min_tokens:
            # DESIGN §2 rule 5, last point: an entry named explicitly is cut to what is left
            # rather than pushed to the index by entries ranked below it.
            cut = step.cut(cand, left)
        why_not = _weak_match(cand, best, rules.full_score_share)
        if not why_not and cut.tokens > left:
            why_not = f"{cut.tokens} tokens in full, {max(0, left)} left{kept}"
        if why_not:
            not_full.append((rank, cand, why_not))
            if len(not_full) <= rules.index_topics_max:
                pushed += step.lines_cost([cand])
            continue
        step.remaining -= cut.tokens
        entry = cand.entry
        ref = ref_of(entry, cand.book)
        per_turn.append(InjectedEntry(ref, cut, cand.via))
        cut_note = f"; cut to {cut.tokens} tokens" if cut.truncated else ""
        draft.record(entry.id, cand.book.id, entry.title, Decision.INJECTED, cand.why + cut_note)
    return per_turn, not_full


def _fill_index(not_full: NotFull, step: _Budget, listed: set[tuple[str, str]]) -> None:
    """The next ``index_topics_max`` ranked entries are the topics; a line that does not fit
    is over budget and the slot is not handed further down (lines are all about as long)."""
    rules, draft = step.rules, step.draft
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
            cand.book,
            entry,
            cand.why,
            index_why,
            False,
            step.remaining,
            rules,
            step.tokenizer,
            step.cache,
            draft,
        )
        step.remaining -= added
        if added:
            listed.add((cand.book.id, entry.id))


def _weak_match(cand: Candidate, best: float | None, share: float) -> str:
    """Why a meaning-ranked candidate is too weak for a full slot ("" when it is not): its
    score is below ``share`` of the best meaning score of the turn."""
    if cand.via is not Via.SEMANTIC or cand.score is None or best is None or best <= 0:
        return ""
    if cand.score >= share * best:
        return ""
    return f"meaning score {cand.score:.3f} under {share:.0%} of the best ({best:.3f})"


def _named(cand: Candidate) -> bool:
    """Whether the candidate was named explicitly (a literal title/alias hit)."""
    return cand.via is Via.LITERAL


def _cut(
    book: LoreBook,
    entry: LoreEntry,
    cap: int,
    tokenizer: Tokenizer,
    tokenizer_id: str,
    cache: Matchers,
) -> LoreText:
    """The entry cut to ``cap`` tokens, remembered per book version (tokenising is the cost)."""
    key = ("cut", entry.id, tokenizer_id, str(cap))
    return cache.derived(book, key, lambda: cut_to_tokens(entry.lore, cap, tokenizer, entry.tokens))


def _line(
    book: LoreBook,
    entry: LoreEntry,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    tokenizer_id: str,
    cache: Matchers,
) -> tuple[str, int]:
    """The entry's world-index line and its tokens, remembered per book version."""
    gist_cap = rules.index_gist_tokens_max

    def make_line() -> tuple[str, int]:
        line = index_line(entry.title, entry.lore, tokenizer, gist_cap)
        return line, tokenizer.count(line)

    key = ("line", entry.id, tokenizer_id, str(gist_cap))
    return cache.derived(book, key, make_line)


def _add_line(
    book: LoreBook,
    entry: LoreEntry,
    why: str,
    index_why: str,
    linked: bool,
    remaining: int,
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: Matchers,
    draft: SelectionDraft,
) -> int:
    """Add one world-index line if it fits; return the tokens it used (0 if it did not).

    A line whose gist does not fit is listed by its title alone when that fits (ADR 0013
    item 4): the topic still reaches the model, and the lookup tool can fetch it."""
    line, cost = _line(book, entry, rules, tokenizer, draft.tokenizer_id, cache)
    if cost > remaining and rules.index_title_fallback:
        key = ("title", entry.id, draft.tokenizer_id)
        title_cost = cache.derived(book, key, lambda: tokenizer.count(entry.title))
        if title_cost <= remaining < cost:
            line, cost = entry.title, title_cost
            index_why += "; title only: its gist did not fit"
    if cost > remaining:
        draft.record(
            entry.id,
            book.id,
            entry.title,
            Decision.LEFT_OUT,
            f"{why}; over budget: index line {cost} tokens, {remaining} left",
        )
        return 0
    draft.index.append(IndexLine(ref_of(entry, book), line, linked, cost))
    draft.record(entry.id, book.id, entry.title, Decision.INDEXED, why + index_why)
    return cost


def _add_linked(
    per_turn: list[InjectedEntry],
    large: list[LargeBook],
    remaining: int,
    listed: set[tuple[str, str]],
    rules: SelectionRules,
    tokenizer: Tokenizer,
    cache: Matchers,
    draft: SelectionDraft,
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
