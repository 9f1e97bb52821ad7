"""The classic (keyword) selection of one turn: :func:`select_classic` (docs/classic.md §1).

Passes: the chat scan, then up to two recursion passes (rule 23) over the window plus the
content of the entries activated so far (rules 22, 24); after them, minimum-activation sweeps
widen the window one message at a time (§2.5). In each pass the matching entries go through
inclusion groups, then their probability draw (rule 15). Then the budget (rule 25) picks the
survivors by priority and placement orders them (rule 26). Everything is a pure function of the
turn and the chat state; the new state comes back in the result.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from worldbook.core.classic.budget import Costed, apply_budget, placement_key
from worldbook.core.classic.compiled import CompiledBook
from worldbook.core.classic.draws import TurnDraws
from worldbook.core.classic.evaluate import Outcome, PassContext, evaluate
from worldbook.core.classic.groups import Matched, Ref, filter_groups
from worldbook.core.classic.keys import RegexClock
from worldbook.core.classic.matchers import ClassicMatchers, CompileEach
from worldbook.core.classic.model import MAX_PASSES, ClassicTurn
from worldbook.core.classic.result import ClassicResult, TraceRecord
from worldbook.core.classic.scan import BookScan, ContentSource
from worldbook.core.classic.scanned_text import TextForms
from worldbook.core.classic.state import BookState, ChatState
from worldbook.core.classic.timed import next_state, start_turn
from worldbook.core.classic.trace import activation, default_records, record


def select_classic(
    turn: ClassicTurn, state: ChatState | None = None, cache: ClassicMatchers | None = None
) -> ClassicResult:
    """Select the classic lore of ``turn`` given the chat's ``state`` (None: a fresh chat).
    ``cache``: where compiled books come from (the service's process-wide cache,
    ``worldbook.runtime.classic_cache``); without one each book is compiled for this call."""
    matchers = CompileEach() if cache is None else cache  # an empty cache is falsy
    seen: set[str] = set()
    books: list[CompiledBook] = []
    characters: list[str | None] = []  # this turn's labels (a compiled book is shared)
    for book in turn.books:  # a book reached twice is used once (DESIGN §2 rule 2)
        if book.id not in seen:
            seen.add(book.id)
            books.append(matchers.get(book))
            characters.append(book.character)
    run = _Run(turn, books, state or ChatState())
    run.characters = characters
    run.run_passes()
    run.min_activations()
    return run.finish()


class _Run:
    """The mutable bookkeeping of one turn (never shared, never kept)."""

    def __init__(self, turn: ClassicTurn, books: list[CompiledBook], state: ChatState) -> None:
        self.turn = turn
        self.books = books
        self.state = state
        newest_first = range(len(turn.messages) - 1, -1, -1)
        scanned = [i for i in newest_first if turn.messages[i].role != "system"]
        self.forms = [TextForms(turn.messages[i].content) for i in scanned]
        self.clock = RegexClock()
        self.scans = [BookScan(b, self.forms, scanned, self.clock) for b in books]
        length = turn.resolved_chat_length()
        self.timers = [start_turn(b, state.book(b.book.id), length) for b in books]
        self.draws = TurnDraws(turn.seed, turn.chat_id, length)
        self.assistant = turn.resolved_assistant_messages()
        self.active: dict[Ref, Matched] = {}
        self.failed: set[Ref] = set()  # lost the probability draw: not retried this turn
        self.fates: dict[Ref, Outcome] = {}
        self.skipped = self._skipped(turn.skip)
        self.group_losers: set[Ref] = set()
        self.active_groups: dict[str, str] = {}
        self.passes = 0
        self.characters: list[str | None] = [b.book.character for b in books]

    def _skipped(self, skip: frozenset[tuple[str, str]]) -> set[Ref]:
        """The refs of ``turn.skip``, marked in the trace as in the prompt already."""
        refs: set[Ref] = set()
        if not skip:
            return refs
        for b, book in enumerate(self.books):
            for i, spec in enumerate(book.specs):
                if (book.book.id, spec.entry.id) in skip:
                    refs.add((b, i))
                    self.fates[(b, i)] = Outcome(
                        "elsewhere", "already in this turn's prompt (world lore)"
                    )
        return refs

    # -- passes -----------------------------------------------------------------------------

    def _context(self, pass_no: int, recursion: bool, level: int, extra: int) -> PassContext:
        return PassContext(
            pass_no, recursion, level, extra, self.assistant, self.turn.greeting_index
        )

    def _first_candidates(self) -> set[Ref]:
        refs: set[Ref] = set()
        for b, (book, scan, timers) in enumerate(
            zip(self.books, self.scans, self.timers, strict=True)
        ):
            found = scan.candidates(scan.scan_to(book.max_depth))
            found.update(book.forced, book.watched, book.delayed)
            found.update(timers.sticky, timers.cooldown, timers.matched)
            refs.update((b, i) for i in found)
        return refs

    def run_passes(self) -> None:
        """The chat scan and the recursion passes (rules 22–24, §2.5 delay levels)."""
        recursive = any(b.recursive for b in self.books)
        levels = sorted({lvl for b in self.books if b.recursive for lvl in b.delay_levels})
        level = levels.pop(0) if levels else 0
        candidates = self._first_candidates()
        pass_no, recursion = 1, False
        while True:
            new = self._pass(
                self._context(pass_no, recursion, level if recursion else 0, 0), candidates
            )
            self.passes = pass_no
            if pass_no >= MAX_PASSES or not recursive:
                return
            carried, candidates = self._recurse(new)
            if not carried:
                if not levels:
                    return
                level = levels.pop(0)  # open the next delay-until-recursion level
            candidates |= self.group_losers
            candidates |= {
                (b, i)
                for b, book in enumerate(self.books)
                for i in book.delayed
                if book.specs[i].delay_level <= level
            }
            pass_no, recursion = pass_no + 1, True

    def _pass(self, ctx: PassContext, candidates: Iterable[Ref]) -> list[Matched]:
        """Evaluate candidates, then inclusion groups and probability; the new activations."""
        matched: list[Matched] = []
        for ref in candidates:
            if ref in self.active or ref in self.failed or ref in self.skipped:
                continue
            b, i = ref
            spec = self.books[b].specs[i]
            outcome = evaluate(spec, self.scans[b], self.timers[b], ctx)
            if outcome.fate is None:
                matched.append(Matched(ref, spec, outcome, i in self.timers[b].sticky))
            elif self.fates.get(ref, outcome).fate != "group" or outcome.fate == "group":
                self.fates[ref] = outcome  # a group loss stays the reason unless lost again
        matched.sort(key=lambda m: (not m.sticky, placement_key(m.spec)))
        survivors, losers = filter_groups(
            matched, self.active_groups, lambda group: self.draws.group(group, ctx.pass_no)
        )
        for ref, reason in losers.items():
            self.fates[ref] = Outcome("group", reason, pass_no=ctx.pass_no)
            self.group_losers.add(ref)
        new: list[Matched] = []
        for item in survivors:
            lost = self._probability(item, ctx)
            if lost is not None:
                self.failed.add(item.ref)
                self.fates[item.ref] = lost
                continue
            self.active[item.ref] = item
            self.fates.pop(item.ref, None)
            self.group_losers.discard(item.ref)
            for group in item.spec.groups:
                self.active_groups.setdefault(group, item.spec.entry.title)
            new.append(item)
        return new

    def _probability(self, item: Matched, ctx: PassContext) -> Outcome | None:
        """The entry's draw (rule 15): None when it passes. Sticky entries do not re-roll."""
        chance = item.spec.probability
        if chance >= 100 or item.sticky:
            return None
        entry = item.spec.entry
        draw = self.draws.probability(entry.book_id, entry.id)
        if draw < chance:
            return None
        reason = f"probability draw {draw:.2f} ≥ {chance}: lost ({item.outcome.reason})"
        return Outcome("probability", reason, hits=item.outcome.hits, pass_no=ctx.pass_no)

    def _recurse(self, new: list[Matched]) -> tuple[bool, set[Ref]]:
        """Feed the new activations' content to recursive books (decorators already stripped);
        (whether any content was carried, entries a new hit may activate)."""
        carried = [m for m in new if not m.spec.entry.prevent_recursion and m.spec.text]
        refs: set[Ref] = set()
        for item in carried:
            source_book = self.books[item.ref[0]]
            entry = item.spec.entry
            source = ContentSource(entry.book_id, entry.id, entry.title)
            for b, scan in enumerate(self.scans):
                if scan.book.recursive:
                    kids = scan.add_content(source_book, item.ref[1], source)
                    refs.update((b, i) for i in scan.candidates(kids))
        return bool(carried), refs

    def min_activations(self) -> None:
        """Widen book-depth windows one message per sweep while fewer than the books'
        ``min_activations`` are active (SillyTavern, classic.md §2.5; no recursion text)."""
        wanted = max((b.book.settings.min_activations for b in self.books), default=0)
        sweep = 0
        while len(self.active) < wanted:
            sweep += 1
            refs: set[Ref] = set()
            room = False
            for b, (book, scan) in enumerate(zip(self.books, self.scans, strict=True)):
                settings = book.book.settings
                cap = min(settings.min_activations_depth_max or len(self.forms), len(self.forms))
                depth = settings.scan_depth + sweep
                if depth > cap:
                    continue
                room = True
                scan.scan_to(depth)
                kids = [kid for kid, age in scan.ages.items() if age == depth - 1]
                refs.update((b, i) for i in scan.candidates(kids) if book.specs[i].depth_from_book)
            if not room:
                return
            self._pass(self._context(self.passes + sweep, False, 0, sweep), refs)

    # -- result -----------------------------------------------------------------------------

    def finish(self) -> ClassicResult:
        costed: list[Costed] = []
        for ref, item in self.active.items():
            if not item.spec.text:
                self.fates[ref] = Outcome(
                    "empty",
                    "activated, but its content is empty",
                    hits=item.outcome.hits,
                    pass_no=item.outcome.pass_no,
                )
                continue
            tokens = item.spec.tokens
            if tokens is None:
                tokens = self.turn.count_tokens(item.spec.text)
            costed.append(Costed(ref, item.spec, tokens))
        budget = self.turn.resolved_budget()
        kept, dropped, used = apply_budget(costed, budget)
        activations = tuple(
            activation(c, self.active[c.ref].outcome, self.characters[c.ref[0]]) for c in kept
        )
        costs = {c.ref: c.tokens for c in costed}
        return ClassicResult(
            activations=activations,
            trace=self._trace(kept, costs, dropped),
            budget=budget,
            used=used,
            passes=self.passes,
            state=self._next_state(kept),
            notes=tuple(self.clock.timed_out.values()),
        )

    def _trace(
        self, kept: list[Costed], tokens: dict[Ref, int], dropped: dict[Ref, str]
    ) -> tuple[TraceRecord, ...]:
        """One record per entry: the turn-independent default, replaced for the entries this
        turn looked at (a list copy plus a few records, whatever the book size)."""
        per_book = [list(default_records(book)) for book in self.books]
        for ref, outcome in self.fates.items():
            spec = self.books[ref[0]].specs[ref[1]]
            per_book[ref[0]][ref[1]] = record(
                spec, outcome.fate or "no_match", outcome.reason, outcome
            )
        for ref, why in dropped.items():
            item = self.active[ref]
            reason = f"{why}; activated by {item.outcome.reason}"
            per_book[ref[0]][ref[1]] = record(
                item.spec, "over_budget", reason, item.outcome, tokens[ref]
            )
        for costed in kept:
            ref = costed.ref
            outcome = self.active[ref].outcome
            per_book[ref[0]][ref[1]] = record(
                costed.spec, "injected", outcome.reason, outcome, costed.tokens
            )
        return tuple(chain.from_iterable(per_book))

    def _next_state(self, kept: list[Costed]) -> ChatState:
        injected: dict[int, list[int]] = {}
        for item in kept:
            injected.setdefault(item.ref[0], []).append(item.ref[1])
        updates: dict[str, BookState] = {}
        for b, book in enumerate(self.books):
            updates[book.book.id] = next_state(book, self.timers[b], injected.get(b, []))
        return self.state.replace_books(updates)
