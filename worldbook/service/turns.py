"""The turn use case (DESIGN §2 rules 1–10, §3): one :class:`TurnRequest` in, its lore out.

:func:`run_turn` is the one code path behind a real turn, a preview and the tool lookup:

1. resolve the request's books (explicit ids, or a cast: story/novel books first, then each
   character's in cast order) and check the acting user may use each (``cast.py``);
2. load them for the core (``turn_books.py``): views with the chat's names, the chat's classic
   state, the meaning search;
3. ask the pure core once (:func:`worldbook.core.turn.select_lore`) and render the result;
4. for a real turn, write the chat's classic state and request log (one transaction, when the
   turn names a chat) and record which entries reached the model and how.

:func:`select_turn`, :func:`preview` and :func:`lookup_entry` are the library's shorthands: each
builds the request and runs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from worldbook.core import limits
from worldbook.core.classic import ChatState, ClassicResult, book_state_to_json
from worldbook.core.drafts import JSONDict
from worldbook.core.matching import normalize
from worldbook.core.records import BookRecord
from worldbook.core.rendering import RenderedPrompt, render
from worldbook.core.selection_json import TraceLevel, selection_to_json
from worldbook.core.turn import LoreTools, TurnLore, select_lore
from worldbook.core.turn_request import BookSource, ChatCounts, TurnKind, TurnRequest
from worldbook.core.types import Message, ModelProfile, Selection, Via
from worldbook.errors import EntryNotFound, InvalidInput, ServiceUnavailable
from worldbook.runtime.logs import note_books
from worldbook.service.cast import resolve_books
from worldbook.service.needs import Turns
from worldbook.service.request_log import log_record
from worldbook.service.turn_books import TurnBooks, names_for, resolved_turn, world_views
from worldbook.service.turn_timing import TimedMatchers, timed_turn, turn_path
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


def run_turn(services: Turns, request: TurnRequest) -> TurnResult:
    """The one code path of every turn (DESIGN §2 rule 8); see the module doc."""
    if request.kind is TurnKind.SELECT:
        check_messages(request.messages)
    started = time.perf_counter()
    with services.foreground.serving(), timed_turn() as clock:
        with clock.stage("resolve_books"):
            books, notes = resolve_books(services, request.user_id, request.source)
            note_books([b.id for b, _ in books])
            resolved = resolved_turn(services, request, books, notes)
        with clock.stage("selection"):
            lore = select_lore(resolved, lore_tools(services, request.profile))
        with clock.stage("rendering"):
            rendered = render(lore.selection, request.profile)
        whole = set(lore.selection.whole_books)
        path = turn_path(
            not resolved.world, clock.searched, all(b.id in whole for b in resolved.world)
        )
        clock.report(path, time.perf_counter() - started)
        # The living world: the owner's tool-capable turns may add lore (DESIGN §5).
        owned = [b for b, _ in books]
        living = writable_book(owned, request.user_id) if rendered.supports_tools else None
        if living is not None:
            rendered = replace(rendered, living_tools=True)
        if request.is_real:
            _write_chat(services, request, books, lore, resolved.chat_state)
            _record_usage(services, lore.selection)
        return TurnResult(
            selection=lore.selection,
            rendered=rendered,
            notes=tuple(notes),
            books=tuple(books),
            classic=lore.classic,
            messages=len(request.messages),
            living_book_id=living,
        )


def lore_tools(services: Turns, profile: ModelProfile) -> LoreTools:
    """The turn's tokenizer, the cached counts of lore texts and the process-wide caches."""
    counter = services.token_counter(profile.tokenizer_id)
    return LoreTools(
        rules=services.rules,
        tokenizer=counter.tokenizer,
        count_tokens=counter.count,
        matchers=TimedMatchers(services.matcher_cache),
        classic_matchers=services.classic_matchers,
    )


def _write_chat(
    services: Turns,
    request: TurnRequest,
    books: TurnBooks,
    lore: TurnLore,
    before: ChatState,
) -> None:
    """A real turn of a named chat: its changed classic state and its request-log row, one
    transaction. A failure fails the turn (the app retries), so a turn never half-happens."""
    if request.chat_id is None:
        return
    keep = services.settings.chat_log_turns
    states = chat_state_rows(lore.classic, before)
    if not keep and not states:
        return  # nothing to remember: no transaction
    log = None
    if keep:
        log = log_record(
            lore.selection,
            books,
            lore.classic,
            messages=len(request.messages),
            chat_length=request.counts.chat_length,
        )
    services.chats.record_chat_turn(
        request.user_id, request.chat_id, states=states, log=log, keep_log=keep
    )


def chat_state_rows(result: ClassicResult | None, before: ChatState) -> dict[str, JSONDict | None]:
    """The rows a real turn writes: each pool book's new state where it changed (None deletes
    an emptied one); most turns change nothing and write no state row."""
    if result is None:
        return {}
    rows: dict[str, JSONDict | None] = {}
    for book_id in dict.fromkeys(r.book_id for r in result.trace):
        new = book_state_to_json(result.state.book(book_id))
        if new != book_state_to_json(before.book(book_id)):
            rows[book_id] = new or None
    return rows


def _record_usage(services: Turns, selection: Selection) -> None:
    uses = [(e.ref.entry_id, "canon") for e in selection.canon]
    uses += [(e.ref.entry_id, _USAGE_VIA.get(e.via, "full")) for e in selection.injected]
    uses += [(line.ref.entry_id, "index") for line in selection.index]
    book_ids = list(dict.fromkeys(r.book_id for r in selection.trace))
    try:
        services.usage.record(book_ids, uses)  # written in the background (usage_recorder.py)
    except ServiceUnavailable as exc:
        # Analytics never fail a turn that was answered.
        logger.warning("usage not recorded: %s", exc)


def check_messages(messages: Sequence[Message]) -> None:
    """A turn's messages: at least one, clean text, within the per-message and per-turn
    character limits (an unbounded message once took 225 s to embed)."""
    if not messages:
        raise InvalidInput("A turn needs at least one message.", field="messages")
    total = 0
    for i, message in enumerate(messages):
        limits.check_message(message.content, field=f"messages[{i}].content")
        total += len(message.content)
    limits.check_turn_text(total)


def preview_sample(message: str | None, messages: Sequence[Message] | None) -> tuple[Message, ...]:
    """A preview's sample: one user message, or a short chat, at most 2,000 characters in all
    (DESIGN §6 "preview message")."""
    if (message is None) == (messages is None):
        raise InvalidInput("Give exactly one of message or messages.", field="message")
    if message is not None:
        limits.check_preview_message(message)
        return (Message(role="user", content=message),)
    sample = tuple(messages or ())
    check_messages(sample)
    limits.check_preview_message("\n".join(m.content for m in sample), field="messages")
    return sample


@dataclass(frozen=True, slots=True)
class LookedUp:
    """The lookup tool's answer: an entry of the turn's books as the turn shows it."""

    book_id: str
    entry_id: str
    title: str
    lore: str


def lookup(
    services: Turns,
    request: TurnRequest,
    *,
    title: str | None = None,
    entry_id: str | None = None,
) -> LookedUp:
    """The full lore of the entry the model asked for — by title or alias (names filled in
    as the turn showed them), or by id — only from the turn's books, never a disabled one
    (DESIGN §2 rule 7). An id outside the turn's books gets the answer of an id that never
    existed, so other books cannot be probed through the tool."""
    if (title is None) == (entry_id is None):
        raise InvalidInput("Give exactly one of title or entry_id.", field="title")
    wanted = normalize(title).strip() if title is not None else None
    if wanted == "":
        raise InvalidInput("Give the title of the entry to look up.", field="title")
    books, _ = resolve_books(services, request.user_id, request.source)
    names = names_for(request)
    # Every book of the turn, classic ones included: the tool reads an entry's lore.
    for book in world_views(services, books, request.profile.tokenizer_id, names):
        for entry in book.entries:
            if not entry.enabled:
                continue
            if entry_id is not None:
                found = entry.id == entry_id
            else:
                found = any(normalize(n).strip() == wanted for n in (entry.title, *entry.aliases))
            if found:
                return LookedUp(book.id, entry.id, entry.title, entry.lore)
    if entry_id is not None:
        raise EntryNotFound.for_id(entry_id)
    raise EntryNotFound(f"No enabled entry titled {title!r} in this turn's books.", field="title")


def select_turn(
    services: Turns,
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
    counts = chat or ChatCounts()
    request = TurnRequest(user_id, source, profile, tuple(messages), chat_id, user_name, counts)
    return run_turn(services, request)


def preview(
    services: Turns,
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
    sample = preview_sample(message, messages)
    counts = chat or ChatCounts()
    request = TurnRequest(
        user_id, source, profile, sample, chat_id, user_name, counts, TurnKind.PREVIEW
    )
    return run_turn(services, request)


def lookup_entry(
    services: Turns,
    *,
    user_id: str,
    source: BookSource,
    title: str,
    profile: ModelProfile,
    chat_id: str | None = None,
    user_name: str | None = None,
    stand_ins: bool = False,
) -> tuple[str, str, str]:
    """The lookup by title (``stand_ins``: names as a preview shows them). Returns (book id,
    entry id, lore)."""
    kind = TurnKind.PREVIEW if stand_ins else TurnKind.LOOKUP
    request = TurnRequest(user_id, source, profile, (), chat_id, user_name, kind=kind)
    found = lookup(services, request, title=title)
    return found.book_id, found.entry_id, found.lore
