"""The turn use cases: ``select_turn`` (counts usage), ``preview`` (same path, no usage) and
``lookup_entry`` (the tool the model may call). DESIGN §2 rules 1–10.

The pipeline of one turn:
1. resolve the turn's books (explicit ids, or a cast: story/novel books first, then each
   character's in cast order) and check the acting user may use each (``cast.py``);
2. build the core's LoreBooks (cached by book/index version, token counts cached by hash);
3. when a book will not travel whole, embed the last messages (each message once, cached) and
   ask the vector index for the nearest entries of those books;
4. run the pure core (``worldbook.core.selection.select``) on the world and hybrid books, then
   the classic pool (``classic_turn.py``), and render the result;
5. for a real turn, write the chat's classic state and request log (one transaction, when the
   turn names a chat) and record which entries reached the model and how.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worldbook.core import limits
from worldbook.core.classic import ClassicResult
from worldbook.core.macros import MacroNames
from worldbook.core.matching import normalize
from worldbook.core.records import BookRecord
from worldbook.core.rendering import RenderedPrompt, render
from worldbook.core.selection import select, split_books
from worldbook.core.selection_json import TraceLevel, selection_to_json
from worldbook.core.types import (
    BookMode,
    LoreBook,
    Message,
    ModelProfile,
    Selection,
    SemanticHit,
    Turn,
    Via,
)
from worldbook.errors import EntryNotFound, InvalidInput, ServiceUnavailable
from worldbook.service.cast import BookSource, resolve_books
from worldbook.service.classic_turn import (
    ChatCounts,
    ClassicInput,
    ClassicPass,
    add_classic_lore,
    chat_state_rows,
)
from worldbook.service.macro_books import Namer, missing_note, namer, stand_in_note
from worldbook.service.request_log import log_record
from worldbook.service.services import Services
from worldbook.service.writes import writable_book

logger = logging.getLogger(__name__)

_USAGE_VIA = {
    Via.CANON: "canon",
    Via.WHOLE_BOOK: "whole_book",
    Via.LITERAL: "full",
    Via.SEMANTIC: "full",
    Via.ORDER: "full",
    Via.CONSTANT: "canon",
    Via.KEYWORD: "full",
    Via.RECURSION: "full",
}


@dataclass(frozen=True, slots=True)
class TurnResult:
    selection: Selection
    rendered: RenderedPrompt
    notes: tuple[str, ...] = field(default=())
    books: tuple[tuple[BookRecord, str | None], ...] = ()  # the turn's books (and character)
    classic: ClassicResult | None = None  # the classic pool's result (None: no classic book)
    messages: int = 0
    living_book_id: str | None = None  # where this turn's lore_create/lore_append calls go

    def log_record(self, chat_length: int | None = None) -> dict[str, Any]:
        """What went in and why, as the chat's request log keeps it (``--explain``)."""
        return log_record(
            self.selection,
            self.books,
            self.classic,
            messages=self.messages,
            chat_length=chat_length,
        )

    def to_json(self, trace: TraceLevel = "full") -> dict[str, object]:
        """The selection JSON (``worldbook.service.contract.SelectionOut``)."""
        body = selection_to_json(self.selection, self.rendered, trace=trace)
        if self.notes:
            body["notes"] = [*body["notes"], *self.notes]
        if self.living_book_id is not None:
            body["living_world"] = {"book_id": self.living_book_id}
        return body


@dataclass(frozen=True, slots=True)
class TurnInput:
    """One turn's own data: where its books come from, its messages and model, its chat."""

    source: BookSource
    messages: tuple[Message, ...]
    profile: ModelProfile
    chat_id: str | None = None
    user_name: str | None = None
    counts: ChatCounts = field(default_factory=ChatCounts)
    stand_ins: bool = False  # a preview: names not given are shown as stand-ins ("User")

    def namer(self) -> Namer:
        return namer(self.source, self.chat_id, self.user_name, stand_ins=self.stand_ins)


def _lore_books(
    services: Services,
    books: list[tuple[BookRecord, str | None]],
    profile: ModelProfile,
    names: Namer | None = None,
    notes: list[str] | None = None,
) -> list[LoreBook]:
    """The turn's world books as the turn sees them: macros filled in with the chat's names
    (issue 17; without ``names`` macros stay as written); a note per book whose macros lack a
    name."""
    counter = services.token_counter(profile.tokenizer_id)
    names = names or (lambda _character: MacroNames())
    built: list[LoreBook] = []
    for book, character in books:
        services.sync_vector_index(book)
        lore = services.lore_books.get(
            book,
            counter=counter,
            model_id=services.model_id,
            indexed_entries=services.indexed_entries,
        )
        view = services.macro_books.view(
            lore, names(character), tokenizer_id=counter.tokenizer_id, count_many=counter.count_many
        )
        if view.missing and notes is not None:
            notes.append(missing_note(book.title, view.missing))
        if view.stood_in and notes is not None:
            notes.append(stand_in_note(book.title, view.stood_in))
        built.append(replace(view.book, character=character) if character else view.book)
    return built


def _semantic_hits(
    services: Services, books: list[LoreBook], messages: Sequence[Message], profile: ModelProfile
) -> tuple[tuple[SemanticHit, ...], list[str]]:
    """Nearest entries of the books that will not travel whole (DESIGN §2 rule 5)."""
    rules = services.rules
    _, large = split_books(books, profile, rules)
    searchable = [b.id for b in large if any(e.indexed and e.enabled for e in b.entries)]
    texts = [m.content for m in messages if m.role != "system" and m.content.strip()]
    if not searchable or not texts:
        return (), []
    k = rules.full_entries_max + rules.index_topics_max + rules.literal_max
    try:
        queries = services.query_embeddings.embed_conversation(texts, last=rules.semantic_messages)
        hits = services.vector_index.search(searchable, queries, k)
    except ServiceUnavailable as exc:
        # Meaning-based ranking is an improvement, not a precondition: literal + list order
        # still answer the turn (DESIGN §2 rule 6).
        logger.warning("semantic search unavailable: %s", exc)
        return (), [f"Semantic search unavailable ({exc.message}); used names and list order."]
    return tuple(hits), []


def run_turn(
    services: Services, *, user_id: str, turn: TurnInput, record_usage: bool
) -> TurnResult:
    """The one code path behind both :func:`select_turn` and :func:`preview` (rule 8)."""
    with services.foreground.serving():
        return _run_turn(services, user_id=user_id, turn=turn, record_usage=record_usage)


def _run_turn(
    services: Services, *, user_id: str, turn: TurnInput, record_usage: bool
) -> TurnResult:
    records, notes = resolve_books(services, user_id, turn.source)
    world = [(b, c) for b, c in records if b.mode is not BookMode.CLASSIC]
    books = _lore_books(services, world, turn.profile, turn.namer(), notes)
    hits, more_notes = _semantic_hits(services, books, turn.messages, turn.profile)
    core_turn = Turn(
        books=tuple(books), messages=turn.messages, profile=turn.profile, semantic_hits=hits
    )
    tokenizer = services.token_counter(turn.profile.tokenizer_id).tokenizer
    selection = select(core_turn, services.rules, tokenizer, matcher_cache=services.matcher_cache)
    selection, classic = add_classic_lore(
        services, _classic_input(user_id, turn), records, selection
    )
    rendered = render(selection, turn.profile)
    # The living world (issue 12 item 2): the owner's tool-capable turns may add lore.
    living = writable_book([b for b, _ in records], user_id) if rendered.supports_tools else None
    if living is not None:
        rendered = replace(rendered, living_tools=True)
    if record_usage:
        _write_chat(services, user_id, turn, records, selection, classic)
        _record_usage(services, selection)
    return TurnResult(
        selection=selection,
        rendered=rendered,
        notes=tuple(notes + more_notes),
        books=tuple(records),
        classic=classic.result if classic else None,
        messages=len(turn.messages),
        living_book_id=living,
    )


def _classic_input(user_id: str, turn: TurnInput) -> ClassicInput:
    return ClassicInput(
        user_id=user_id,
        messages=turn.messages,
        tokenizer_id=turn.profile.tokenizer_id,
        chat_id=turn.chat_id,
        counts=turn.counts,
        names=turn.namer(),
    )


def _write_chat(
    services: Services,
    user_id: str,
    turn: TurnInput,
    records: list[tuple[BookRecord, str | None]],
    selection: Selection,
    classic: ClassicPass | None,
) -> None:
    """A real turn of a named chat: its changed classic state and its request-log row, one
    transaction. A failure fails the turn (the app retries), so a turn never half-happens."""
    if turn.chat_id is None:
        return
    keep = services.settings.chat_log_turns
    states = chat_state_rows(classic)
    if not keep and not states:
        return  # nothing to remember: no transaction
    log = None
    if keep:
        log = log_record(
            selection,
            records,
            classic.result if classic else None,
            messages=len(turn.messages),
            chat_length=turn.counts.chat_length,
        )
    services.store.record_chat_turn(user_id, turn.chat_id, states=states, log=log, keep_log=keep)


def _record_usage(services: Services, selection: Selection) -> None:
    uses = [(e.ref.entry_id, "canon") for e in selection.canon]
    uses += [(e.ref.entry_id, _USAGE_VIA.get(e.via, "full")) for e in selection.injected]
    uses += [(line.ref.entry_id, "index") for line in selection.index]
    book_ids = list(dict.fromkeys(r.book_id for r in selection.trace))
    try:
        services.usage.record(book_ids, uses)  # written in the background (usage_recorder.py)
    except ServiceUnavailable as exc:
        # Analytics never fail a turn that was answered.
        logger.warning("usage not recorded: %s", exc)


def select_turn(
    services: Services,
    *,
    user_id: str,
    source: BookSource,
    messages: Sequence[Message],
    profile: ModelProfile,
    chat_id: str | None = None,
    user_name: str | None = None,
    chat: ChatCounts | None = None,
) -> TurnResult:
    """Decide the lore of one real turn and count its usage."""
    check_messages(messages)
    turn = TurnInput(source, tuple(messages), profile, chat_id, user_name, chat or ChatCounts())
    return run_turn(services, user_id=user_id, turn=turn, record_usage=True)


def preview(
    services: Services,
    *,
    user_id: str,
    source: BookSource,
    message: str | None = None,
    profile: ModelProfile,
    messages: Sequence[Message] | None = None,
    chat_id: str | None = None,
    user_name: str | None = None,
    chat: ChatCounts | None = None,
) -> TurnResult:
    """What a turn with this user message (or this short chat, ≤ 2,000 characters in all)
    would select; the same code path as a real turn, but it counts no usage and writes no
    chat state (DESIGN §2 rule 8)."""
    if (message is None) == (messages is None):
        raise InvalidInput("Give exactly one of message or messages.", field="message")
    if message is not None:
        limits.check_preview_message(message)
        sample: Sequence[Message] = [Message(role="user", content=message)]
    else:
        sample = messages or []
        check_messages(sample)
        limits.check_preview_message("\n".join(m.content for m in sample), field="messages")
    turn = TurnInput(
        source, tuple(sample), profile, chat_id, user_name, chat or ChatCounts(), stand_ins=True
    )
    return run_turn(services, user_id=user_id, turn=turn, record_usage=False)


def check_messages(messages: Sequence[Message]) -> None:
    """A turn's messages: at least one, clean text, within the per-message and per-turn
    character limits (an unbounded message once took 225 s to embed, issue 15)."""
    if not messages:
        raise InvalidInput("A turn needs at least one message.", field="messages")
    total = 0
    for i, message in enumerate(messages):
        limits.check_message(message.content, field=f"messages[{i}].content")
        total += len(message.content)
    limits.check_turn_text(total)


def lookup_entry(
    services: Services,
    *,
    user_id: str,
    source: BookSource,
    title: str,
    profile: ModelProfile,
    chat_id: str | None = None,
    user_name: str | None = None,
    stand_ins: bool = False,
) -> tuple[LoreBook, str, str]:
    """The full lore of the entry the model asked for by title (or alias, names filled in as
    the turn showed them; ``stand_ins`` as a preview shows them), only from the turn's books,
    never a disabled one. Returns (book, entry id, lore)."""
    wanted = normalize(title).strip()
    if not wanted:
        raise InvalidInput("Give the title of the entry to look up.", field="title")
    records, _ = resolve_books(services, user_id, source)
    names = namer(source, chat_id, user_name, stand_ins=stand_ins)
    for book in _lore_books(services, records, profile, names):
        for entry in book.entries:
            if not entry.enabled:
                continue
            called = (entry.title, *entry.aliases)
            if any(normalize(n).strip() == wanted for n in called):
                return book, entry.id, entry.lore
    raise EntryNotFound(f"No enabled entry titled {title!r} in this turn's books.", field="title")
