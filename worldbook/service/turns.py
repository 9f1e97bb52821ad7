"""The turn use cases: ``select_turn`` (counts usage), ``preview`` (same path, no usage) and
``lookup_entry`` (the tool the model may call). DESIGN §2 rules 1–10, issue 3 item 4.

The pipeline of one turn:
1. resolve the turn's books (explicit ids, or a cast: story/novel books first, then each
   character's in cast order) and check the acting user may use each;
2. build the core's LoreBooks (cached by book/index version, token counts cached by hash);
3. when a book will not travel whole, embed the last messages (each message once, cached) and
   ask the vector index for the nearest entries of those books;
4. run the pure core (``worldbook.core.selection.select``) and render the result;
5. for a real turn, record which entries reached the model and how.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from worldbook.core import limits
from worldbook.core.matching import normalize
from worldbook.core.records import BookRecord, TargetKind
from worldbook.core.rendering import RenderedPrompt, render
from worldbook.core.selection import select, split_books
from worldbook.core.selection_json import selection_to_json
from worldbook.core.types import (
    LoreBook,
    Message,
    ModelProfile,
    Selection,
    SemanticHit,
    Turn,
    Via,
)
from worldbook.errors import EntryNotFound, InvalidInput, ServiceUnavailable, WorldbookError
from worldbook.service.access import require_use
from worldbook.service.services import Services

logger = logging.getLogger(__name__)

_USAGE_VIA = {
    Via.CANON: "canon",
    Via.WHOLE_BOOK: "whole_book",
    Via.LITERAL: "full",
    Via.SEMANTIC: "full",
    Via.ORDER: "full",
}


@dataclass(frozen=True, slots=True)
class CastMember:
    """A character of the turn; ``name`` labels its lore in group chats (and fills
    ``{{char}}``). ``owner`` is the user whose attachments of this character count (default:
    the source's owner, else the acting user): attachments are scoped by who made them."""

    character_id: str
    name: str | None = None
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class BookSource:
    """Where a turn's books come from: explicit ids, a cast, or both (explicit ids first)."""

    book_ids: tuple[str, ...] = ()
    story_id: str | None = None
    novel_id: str | None = None
    characters: tuple[CastMember, ...] = ()
    owner: str | None = None  # whose attachments the cast resolves (default: the acting user)

    def is_empty(self) -> bool:
        return not (self.book_ids or self.story_id or self.novel_id or self.characters)


@dataclass(frozen=True, slots=True)
class TurnResult:
    selection: Selection
    rendered: RenderedPrompt
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, object]:
        body = selection_to_json(self.selection, self.rendered)
        if self.notes:
            body["notes"] = [*body.get("notes", []), *self.notes]
        return body


def resolve_books(
    services: Services, user_id: str, source: BookSource
) -> tuple[list[tuple[BookRecord, str | None]], list[str]]:
    """The turn's books in DESIGN §2 rule 2 order with the character each came from.

    Explicit ids the user may not use raise (404); attached books the user may no longer use
    (made private, trashed) are skipped with a note — the cast is the app's data, not an error.
    """
    if source.is_empty():
        raise InvalidInput(
            "A turn needs books: give book_ids, or a cast (story_id, novel_id, characters).",
            field="books",
        )
    wanted: list[tuple[str, str | None, bool]] = [(b, None, True) for b in source.book_ids]
    owners: tuple[tuple[TargetKind, str | None], ...] = (
        ("story", source.story_id),
        ("novel", source.novel_id),
    )
    owner = source.owner or user_id
    for kind, target in owners:
        if target:
            ids = services.store.attachments_for(kind, target, owner)
            wanted += [(b, None, False) for b in ids]
    for member in source.characters:
        label = member.name or member.character_id
        ids = services.store.attachments_for(
            "character", member.character_id, member.owner or owner
        )
        wanted += [(b, label, False) for b in ids]

    books: list[tuple[BookRecord, str | None]] = []
    notes: list[str] = []
    for book_id, character, explicit in wanted:
        try:
            book = require_use(services.store.get_book(book_id, include_trashed=True), user_id)
        except WorldbookError:
            if explicit:
                raise
            # No id: the book may be someone else's private book (ids must not leak).
            notes.append("An attached book was skipped: it is not available to you.")
            continue
        books.append((book, character))
    return books, notes


def _lore_books(
    services: Services, books: list[tuple[BookRecord, str | None]], profile: ModelProfile
) -> list[LoreBook]:
    counter = services.token_counter(profile.tokenizer_id)
    built: list[LoreBook] = []
    for book, character in books:
        services.sync_vector_index(book)
        lore = services.lore_books.get(
            book, counter=counter, model_id=services.model_id, indexed_ids=services.indexed_ids
        )
        built.append(replace(lore, character=character) if character else lore)
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
    services: Services,
    *,
    user_id: str,
    source: BookSource,
    messages: Sequence[Message],
    profile: ModelProfile,
    record_usage: bool,
) -> TurnResult:
    """The one code path behind both :func:`select_turn` and :func:`preview` (rule 8)."""
    records, notes = resolve_books(services, user_id, source)
    books = _lore_books(services, records, profile)
    hits, more_notes = _semantic_hits(services, books, messages, profile)
    turn = Turn(books=tuple(books), messages=tuple(messages), profile=profile, semantic_hits=hits)
    tokenizer = services.token_counter(profile.tokenizer_id).tokenizer
    selection = select(turn, services.rules, tokenizer, matcher_cache=services.matcher_cache)
    rendered = render(selection, profile)
    if record_usage:
        _record_usage(services, selection)
    return TurnResult(selection=selection, rendered=rendered, notes=tuple(notes + more_notes))


def _record_usage(services: Services, selection: Selection) -> None:
    uses = [(e.ref.entry_id, "canon") for e in selection.canon]
    uses += [(e.ref.entry_id, _USAGE_VIA[e.via]) for e in selection.injected]
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
) -> TurnResult:
    """Decide the lore of one real turn and count its usage."""
    _check_messages(messages)
    return run_turn(
        services,
        user_id=user_id,
        source=source,
        messages=messages,
        profile=profile,
        record_usage=True,
    )


def preview(
    services: Services,
    *,
    user_id: str,
    source: BookSource,
    message: str,
    profile: ModelProfile,
) -> TurnResult:
    """What a turn with this one user message would select; does not count as usage."""
    limits.check_preview_message(message)
    messages = [Message(role="user", content=message)]
    return run_turn(
        services,
        user_id=user_id,
        source=source,
        messages=messages,
        profile=profile,
        record_usage=False,
    )


def _check_messages(messages: Sequence[Message]) -> None:
    if not messages:
        raise InvalidInput("A turn needs at least one message.", field="messages")
    for i, message in enumerate(messages):
        limits.check_clean_text(message.content, field=f"messages[{i}].content")


def lookup_entry(
    services: Services, *, user_id: str, source: BookSource, title: str, profile: ModelProfile
) -> tuple[LoreBook, str, str]:
    """The full lore of the entry the model asked for by title (or alias), only from the turn's
    books, never a disabled one. Returns (book, entry id, lore)."""
    wanted = normalize(title).strip()
    if not wanted:
        raise InvalidInput("Give the title of the entry to look up.", field="title")
    records, _ = resolve_books(services, user_id, source)
    for book in _lore_books(services, records, profile):
        for entry in book.entries:
            if not entry.enabled:
                continue
            names = (entry.title, *entry.aliases)
            if any(normalize(n).strip() == wanted for n in names):
                return book, entry.id, entry.lore
    raise EntryNotFound(f"No enabled entry titled {title!r} in this turn's books.")
