"""The classic part of a turn: the keyword pool, its chat state, and its place in the Selection
(issue 11 items 2–4; DESIGN §3).

Every classic book of the turn and every hybrid book that does not travel whole form ONE pool
(seed rule), selected by :func:`worldbook.core.classic.select_classic` after the world
selection (DESIGN §2) has run on the world and hybrid books. Then:

- classic activations join ``Selection.injected`` in render order, between the stable world
  prefix (canon, whole books) and the per-turn world lore, with via constant | keyword |
  recursion, their role and exact text; they render into the one lorebook slot;
- the trace gets one record per classic entry (injected, or left out with its fate);
- hybrid books: an entry the world path already sent in full is skipped by the keyword pass
  (never charged twice); an entry the world path only listed in the world index and the keyword
  pass brings in full leaves the index; keyword activations of hybrid entries are charged to the
  lorebook budget (the highest ``token_budget`` of the pool's books), never to the world budgets.

Chat state is read before the selection (a preview reads it too) and returned; the caller
writes it for real turns only (:func:`chat_state_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from worldbook.core.classic import (
    ChatState,
    ClassicBook,
    ClassicResult,
    ClassicTurn,
    book_state_from_json,
    book_state_to_json,
    select_classic,
)
from worldbook.core.classic import TraceRecord as ClassicRecord
from worldbook.core.drafts import JSONDict
from worldbook.core.records import BookRecord
from worldbook.core.types import (
    BookMode,
    Decision,
    EntryRef,
    IndexLine,
    InjectedEntry,
    LoreText,
    Message,
    Selection,
    TraceRecord,
    Via,
)
from worldbook.service.macro_books import Namer
from worldbook.service.same_named import same_named
from worldbook.service.services import Services

CLASSIC_MODES = (BookMode.CLASSIC, BookMode.HYBRID)


@dataclass(frozen=True, slots=True)
class ChatCounts:
    """The whole chat's counts when the app sends only its recent messages (classic timed
    effects clock on ``chat_length``; ``@@activate_only_*`` count ``assistant_messages``;
    ``@@is_greeting`` reads ``greeting_index``). None: counted over the messages sent."""

    chat_length: int | None = None
    assistant_messages: int | None = None
    greeting_index: int | None = None


@dataclass(frozen=True, slots=True)
class ClassicInput:
    """What the classic pass needs of the turn (``user_id`` scopes the chat)."""

    user_id: str
    messages: tuple[Message, ...]
    tokenizer_id: str
    chat_id: str | None = None
    counts: ChatCounts = ChatCounts()
    names: Namer | None = None  # the names of each book's macros (issue 17)


def pool_of(
    services: Services,
    books: Sequence[tuple[BookRecord, str | None]],
    tokenizer_id: str,
    whole_books: Sequence[str],
    names: Namer | None = None,
) -> list[ClassicBook]:
    """The classic pool: classic books, and hybrid books that did not travel whole — with
    their macros filled in with the chat's names (keys included: issue 17)."""
    counter = services.token_counter(tokenizer_id)
    whole = set(whole_books)
    pool: list[ClassicBook] = []
    for record, character in books:
        if record.mode not in CLASSIC_MODES:
            continue
        if record.mode is BookMode.HYBRID and record.id in whole:
            continue  # every entry of it is in the stable prefix already
        book = services.classic_books.get(
            record, tokenizer_id=counter.tokenizer_id, count_many=counter.count_many
        )
        if names is not None:
            book = services.macro_books.classic(book, names(character), counter.count_many)
        pool.append(replace(book, character=character) if character else book)
    return pool


def load_state(services: Services, turn: ClassicInput, pool: Sequence[ClassicBook]) -> ChatState:
    if turn.chat_id is None:
        return ChatState()
    rows = services.store.chat_states(turn.user_id, turn.chat_id, [b.id for b in pool])
    return ChatState({book_id: book_state_from_json(row) for book_id, row in rows.items()})


@dataclass(frozen=True, slots=True)
class ClassicPass:
    """The classic pool's result and the chat state it started from."""

    result: ClassicResult
    before: ChatState


def add_classic_lore(
    services: Services,
    turn: ClassicInput,
    books: Sequence[tuple[BookRecord, str | None]],
    selection: Selection,
) -> tuple[Selection, ClassicPass | None]:
    """The selection with the classic pool's lore merged in (unchanged without a pool)."""
    pool = pool_of(services, books, turn.tokenizer_id, selection.whole_books, turn.names)
    if not pool:
        return selection, None
    hybrid = {b.id for b, _ in books if b.mode is BookMode.HYBRID}
    in_full = (*selection.canon, *selection.injected)
    skip = frozenset((e.ref.book_id, e.ref.entry_id) for e in in_full if e.ref.book_id in hybrid)
    counter = services.token_counter(turn.tokenizer_id)
    # The turn's messages, chat id and chat counts, under the engine's names.
    chat = same_named(turn, ClassicTurn) | same_named(turn.counts, ClassicTurn)
    classic_turn = ClassicTurn(books=tuple(pool), count_tokens=counter.count, skip=skip, **chat)
    before = load_state(services, turn, pool)
    result = select_classic(classic_turn, before, services.classic_matchers)
    characters = [b.character for b in pool if b.character]
    return merge(selection, result, hybrid, characters), ClassicPass(result, before)


def classic_injected(result: ClassicResult) -> list[InjectedEntry]:
    """The activations as selection entries, in render order."""
    return [
        InjectedEntry(
            EntryRef(a.entry_id, a.book_id, a.title, a.tokens, a.character),
            LoreText(a.text, a.tokens),
            Via(a.via),
            role=a.role,
        )
        for a in result.activations
    ]


def classic_trace(result: ClassicResult, hybrid: set[str]) -> list[TraceRecord]:
    """One record per classic entry; hybrid entries only when the keyword injected them (the
    world record says what happened to the others)."""
    out: list[TraceRecord] = []
    for r in result.trace:
        injected = r.fate == "injected"
        if r.book_id in hybrid and not injected:
            continue
        reason = r.reason if injected else f"{r.fate}: {r.reason}"
        decision = Decision.INJECTED if injected else Decision.LEFT_OUT
        out.append(TraceRecord(r.entry_id, r.book_id, r.title, decision, reason))
    return out


def merge(
    selection: Selection, result: ClassicResult, hybrid: set[str], characters: Sequence[str]
) -> Selection:
    """``selection`` with the classic lore in its place (see the module doc)."""
    lore = classic_injected(result)
    by_keyword = {(e.ref.book_id, e.ref.entry_id) for e in lore}
    stable = [e for e in selection.injected if e.via is Via.WHOLE_BOOK]
    per_turn = [e for e in selection.injected if e.via is not Via.WHOLE_BOOK]
    index: list[IndexLine] = []
    freed = 0
    for line in selection.index:
        if (line.ref.book_id, line.ref.entry_id) in by_keyword:
            freed += line.tokens
        else:
            index.append(line)
    world_trace = [
        r for r in selection.trace if (r.book_id, r.entry_id) not in by_keyword or not r.entry_id
    ]
    return replace(
        selection,
        injected=(*stable, *lore, *per_turn),
        index=tuple(index),
        per_turn_tokens=selection.per_turn_tokens - freed,
        trace=(*world_trace, *classic_trace(result, hybrid)),
        notes=(*selection.notes, *result.notes),
        characters=tuple(dict.fromkeys([*selection.characters, *characters])),
        lorebook_budget=result.budget,
        lorebook_tokens=result.used,
    )


def chat_state_rows(done: ClassicPass | None) -> dict[str, JSONDict | None]:
    """The rows a real turn writes: each pool book's new state where it changed (None deletes
    an emptied one); most turns change nothing and write no state row."""
    if done is None:
        return {}
    rows: dict[str, JSONDict | None] = {}
    for book_id in dict.fromkeys(r.book_id for r in done.result.trace):
        new = book_state_to_json(done.result.state.book(book_id))
        if new != book_state_to_json(done.before.book(book_id)):
            rows[book_id] = new or None
    return rows


def left_out_records(result: ClassicResult | None) -> list[ClassicRecord]:
    """Classic entries that were activated or close to it but did not reach the model (the
    request log lists them; "no key matched", disabled and "in the prompt already" are not)."""
    if result is None:
        return []
    quiet = ("injected", "no_match", "disabled", "elsewhere")
    return [r for r in result.trace if r.fate not in quiet]
