"""A request's books loaded for the core (DESIGN §2 rules 2 and 5, §3): the
:class:`~worldbook.core.turn.ResolvedTurn` the core decides from.

- world and hybrid books become :class:`LoreBook` views (cached by book/index version, token
  counts cached by hash), classic and hybrid books :class:`ClassicBook` views, both with the
  chat's names in their macros (``macro_books.py``); a note per book whose macros lack a name;
- the chat's classic state is read (a preview reads it too, and writes nothing);
- the meaning search the core calls: the last messages embedded (each message once, cached)
  and the vector index asked for the nearest entries of the books the core names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from worldbook.core.classic import ChatState, ClassicBook, book_state_from_json
from worldbook.core.macros import MacroNames
from worldbook.core.records import BookRecord
from worldbook.core.referents import boosted, merged
from worldbook.core.turn import ResolvedTurn
from worldbook.core.turn_request import TurnRequest
from worldbook.core.types import BookMode, LoreBook, SemanticHit, SemanticSearch, rescored
from worldbook.errors import ServiceUnavailable
from worldbook.service.aligned_view import WIDEN, fused_search, query_language
from worldbook.service.diverse_hits import EntryVectors, book_entry_vectors, diversified
from worldbook.service.macro_books import Namer, missing_note, namer, stand_in_note
from worldbook.service.needs import LoreViews, Turns
from worldbook.service.previous_turns import previous_referents
from worldbook.service.referent_links import linked_entries, named_entries
from worldbook.service.turn_timing import stage

logger = logging.getLogger(__name__)

CLASSIC_MODES = (BookMode.CLASSIC, BookMode.HYBRID)
Primary = Callable[[Sequence[str], Sequence[str], int], list[SemanticHit]]
"""``primary(messages, book_ids, k)``: the primary view's nearest entries."""
Key = tuple[str, str]  # (book id, entry id)
TurnBooks = Sequence[tuple[BookRecord, str | None]]
"""The turn's books in DESIGN §2 rule 2 order, each with the character it came with."""


def names_for(request: TurnRequest) -> Namer:
    """The names of each book's macros in this turn (stand-ins in a preview)."""
    return namer(
        request.source,
        request.chat_id,
        request.user_name,
        stand_ins=request.stand_in_names,
    )


def resolved_turn(
    services: Turns, request: TurnRequest, books: TurnBooks, notes: list[str]
) -> ResolvedTurn:
    """The request with its books loaded; notes about names and the search go to ``notes``."""
    names = names_for(request)
    world = [(b, c) for b, c in books if b.mode is not BookMode.CLASSIC]
    classic = classic_views(services, books, request.profile.tokenizer_id, names)
    views = tuple(world_views(services, world, request.profile.tokenizer_id, names, notes))
    return ResolvedTurn(
        request=request,
        world=views,
        classic=tuple(classic),
        hybrid=frozenset(b.id for b, _ in books if b.mode is BookMode.HYBRID),
        chat_state=chat_state(services, request, classic),
        search=meaning_search(services, request, notes, views),
    )


def world_views(
    services: LoreViews,
    books: TurnBooks,
    tokenizer_id: str,
    names: Namer | None = None,
    notes: list[str] | None = None,
) -> list[LoreBook]:
    """The world (and hybrid) books as the turn sees them: macros filled in with the chat's
    names (without ``names`` macros stay as written); a note per book whose macros lack a
    name, or show a preview's stand-in."""
    counter = services.token_counter(tokenizer_id)
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
        built.append(view.book.labelled(character))
    return built


def classic_views(
    services: LoreViews, books: TurnBooks, tokenizer_id: str, names: Namer
) -> list[ClassicBook]:
    """The classic and hybrid books as the keyword engine sees them, keys and content filled
    with the chat's names."""
    counter = services.token_counter(tokenizer_id)
    pool: list[ClassicBook] = []
    for record, character in books:
        if record.mode not in CLASSIC_MODES:
            continue
        book = services.classic_books.get(
            record, tokenizer_id=counter.tokenizer_id, count_many=counter.count_many
        )
        book = services.macro_books.classic(book, names(character), counter.count_many)
        pool.append(book.labelled(character))
    return pool


def chat_state(services: Turns, request: TurnRequest, books: Sequence[ClassicBook]) -> ChatState:
    """The chat's classic state of these books (empty without a chat id or classic books)."""
    if request.chat_id is None or not books:
        return ChatState()
    rows = services.chats.chat_states(request.user_id, request.chat_id, [b.id for b in books])
    return ChatState({book_id: book_state_from_json(row) for book_id, row in rows.items()})


def primary_search(services: Turns, by_id: Mapping[str, LoreBook]) -> Primary:
    """The primary view's search of a turn: the conversation embedded, its nearest entries by
    the primary index, or by the gloss index of its language when one of the books is read in
    it (ADR 0023: the author's rows and the glosses in one pass)."""

    def primary(queries: Sequence[str], book_ids: Sequence[str], k: int) -> list[SemanticHit]:
        with stage("query_embedding"):
            vectors = services.query_embeddings.embed_conversation(queries, last=len(queries))
        glosses = services.glosses
        read = [by_id[b].readers for b in book_ids if b in by_id]
        if glosses is not None and any(read):
            language = query_language(queries)
            if any(language in readers for readers in read):
                try:
                    return glosses.search(language, book_ids, vectors, k)
                except ServiceUnavailable as exc:  # the author's own rows still answer
                    logger.warning("gloss view %s unavailable: %s", language, exc)
        return services.vector_index.search(list(book_ids), vectors, k)

    return primary


def meaning_search(
    services: Turns, request: TurnRequest, notes: list[str], views: Sequence[LoreBook] = ()
) -> SemanticSearch:
    """The search the core calls with its large books (DESIGN §2 rule 5): the last
    ``semantic_messages`` messages embedded, the nearest entries of those books — by both
    views fused when the deployment has an aligned one (ADR 0016)."""
    rules = services.rules
    texts = [m.content for m in request.messages if m.role != "system" and m.content.strip()]
    recent = texts[-rules.semantic_messages :]
    by_id = {view.id: view for view in views}

    primary = primary_search(services, by_id)

    def blind(book_id: str) -> frozenset[str]:
        view, aligned = by_id.get(book_id), services.aligned
        if view is None or aligned is None:
            return frozenset()
        key = ("aligned-blind", aligned.model_id)
        return services.matcher_cache.derived(view, key, lambda: aligned.blind(view))

    def languages(book_id: str) -> dict[str, str]:
        view, aligned = by_id.get(book_id), services.aligned
        if view is None or aligned is None:
            return {}
        key = ("entry-languages", aligned.model_id)
        return services.matcher_cache.derived(view, key, lambda: aligned.languages(view))

    def earlier(book_ids: Sequence[str]) -> dict[Key, float]:
        s = services.settings
        turns, fade = s.referent_previous_turns, s.referent_fade
        chat = request.chat_id
        return previous_referents(services.chats, request.user_id, chat, set(book_ids), turns, fade)

    def search(book_ids: tuple[str, ...]) -> tuple[SemanticHit, ...]:
        if not texts:
            return ()
        k = rules.full_entries_max + rules.index_topics_max + rules.literal_max
        try:
            # The primary view's query embedding is timed inside the search (StageClock).
            with stage("vector_search"):
                found = linked_search(
                    services, by_id, recent, book_ids, k, primary, blind, earlier, languages
                )
                return tuple(found)
        except ServiceUnavailable as exc:
            # Meaning-based ranking is an improvement, not a precondition: literal + list
            # order still answer the turn (DESIGN §2 rule 6).
            logger.warning("semantic search unavailable: %s", exc)
            notes.append(f"Semantic search unavailable ({exc.message}); used names and list order.")
            return ()

    return search


def linked_search(
    services: Turns,
    views: dict[str, LoreBook],
    recent: Sequence[str],
    book_ids: Sequence[str],
    k: int,
    primary: Primary,
    blind: Callable[[str], frozenset[str]],
    earlier: Callable[[Sequence[str]], dict[Key, float]] = lambda _books: {},
    languages: Callable[[str], Mapping[str, str]] = lambda _book: {},
) -> list[SemanticHit]:
    """The fused search, its hits raised by the referent links (ADR 0016) when the recent
    messages name entries other entries' lore names (or, with ``earlier``, the chat's
    previous turns selected them: ADR 0021); without such links, the fused search."""

    def search(texts: Sequence[str], wide: int) -> list[SemanticHit]:
        # The views' candidate pool is the plain search's whatever ``wide``: the fused scores
        # depend on it, and the links must re-rank the scores the plain search would give.
        pool = k * WIDEN
        return fused_search(
            primary, services.aligned, texts, book_ids, wide, blind, pool, languages
        )

    settings = services.settings
    weight, strength = settings.referent_link_weight, settings.diversity
    referents: dict[Key, float] = {}
    if weight > 0 or strength > 0:
        fade = settings.referent_fade
        named = named_entries(views, book_ids, services.matcher_cache, recent, fade)
        referents = merged(named, earlier(book_ids))
    links = linked_entries(views, services.matcher_cache, referents) if weight > 0 else {}
    if not links:
        hits = search(recent, k)
    else:
        wide = search(recent, k * WIDEN)
        newest = {(h.book_id, h.entry_id): h.score for h in search(recent[-1:], k * WIDEN)}
        scored = [((h.book_id, h.entry_id), h.score) for h in wide]
        best = boosted(scored, links, newest, weight)[:k]
        hits = rescored(best, wide)
        if settings.full_share_without_links:
            hits = with_lifts(hits, dict(scored))
    if strength == 0:
        return hits
    # ADR 0021: near-duplicates of a better hit give way to the next topic; the referents
    # keep their scores (the literal tier orders its hits by them).
    return diversified(hits, entry_vectors(services, views, hits), strength, referents)


def entry_vectors(
    services: Turns, views: dict[str, LoreBook], hits: Sequence[SemanticHit]
) -> dict[str, EntryVectors]:
    """The centred entry vectors of the books among the hits (ADR 0021)."""
    return {
        b: book_entry_vectors(
            views[b],
            services.vectors,
            services.vector_index,
            services.model_id,
            services.matcher_cache,
        )
        for b in dict.fromkeys(h.book_id for h in hits)
        if b in views
    }


def with_lifts(
    hits: Sequence[SemanticHit], plain: dict[tuple[str, str], float]
) -> list[SemanticHit]:
    """The hits with the part of each score the links added (ADR 0021): an entry that was not
    among the plain hits joined at the lowest plain score."""
    floor = min(plain.values(), default=0.0)
    return [
        replace(h, lift=max(0.0, h.score - plain.get((h.book_id, h.entry_id), floor))) for h in hits
    ]
