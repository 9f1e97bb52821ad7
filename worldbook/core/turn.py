"""The lore of one turn, both engines at once (DESIGN §2 and §3): the core is asked once.

The service resolves the request's books (world and hybrid books as :class:`LoreBook` views,
classic and hybrid books as :class:`ClassicBook` views, macros filled), reads the chat's
classic state, and hands them over with the request itself in a :class:`ResolvedTurn`. Then:

1. the world selection (:func:`worldbook.core.selection.select`) runs on the world and hybrid
   books, calling the turn's meaning search once for the books that will not travel whole;
2. the classic pool — every classic book and every hybrid book that did not travel whole —
   runs through the keyword engine (:func:`worldbook.core.classic.select_classic`), skipping
   hybrid entries the world path already sent;
3. the two are merged (:func:`worldbook.core.lore_merge.merge`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from worldbook.core.classic import (
    ChatState,
    ClassicBook,
    ClassicMatchers,
    ClassicResult,
    ClassicTurn,
    select_classic,
)
from worldbook.core.lore_merge import merge, sent_in_full
from worldbook.core.matching import Matchers
from worldbook.core.selection import select
from worldbook.core.tokens import Tokenizer
from worldbook.core.turn_request import TurnRequest
from worldbook.core.types import LoreBook, Selection, SelectionRules, SemanticSearch, Turn


@dataclass(frozen=True, slots=True)
class ResolvedTurn:
    """A request with its books loaded: what the core decides from."""

    request: TurnRequest
    world: tuple[LoreBook, ...] = ()  # world and hybrid books, in turn order
    classic: tuple[ClassicBook, ...] = ()  # classic and hybrid books, in turn order
    hybrid: frozenset[str] = frozenset()  # ids of the hybrid books (in both lists)
    chat_state: ChatState = field(default_factory=ChatState)
    search: SemanticSearch | None = None


@dataclass(frozen=True, slots=True)
class LoreTools:
    """What both engines count and cache with (process-wide caches, the turn's tokenizer)."""

    rules: SelectionRules
    tokenizer: Tokenizer
    count_tokens: Callable[[str], int]  # cached counts of lore texts (the keyword pass)
    matchers: Matchers
    classic_matchers: ClassicMatchers


@dataclass(frozen=True, slots=True)
class TurnLore:
    """The turn's selection; the keyword pass's result when the turn had a classic pool."""

    selection: Selection
    classic: ClassicResult | None = None


def select_lore(turn: ResolvedTurn, tools: LoreTools) -> TurnLore:
    """DESIGN §2 then §3, as the module doc says."""
    request = turn.request
    world = Turn(turn.world, request.messages, request.profile, search=turn.search)
    selection = select(world, tools.rules, tools.tokenizer, matcher_cache=tools.matchers)
    whole = set(selection.whole_books)
    pool = tuple(b for b in turn.classic if not (b.id in turn.hybrid and b.id in whole))
    if not pool:
        return TurnLore(selection)
    counts = request.counts
    keyword_turn = ClassicTurn(
        books=pool,
        messages=request.messages,
        count_tokens=tools.count_tokens,
        chat_id=request.chat_id,
        chat_length=counts.chat_length,
        assistant_messages=counts.assistant_messages,
        greeting_index=counts.greeting_index,
        skip=sent_in_full(selection, turn.hybrid),
    )
    result = select_classic(keyword_turn, turn.chat_state, tools.classic_matchers)
    characters = [b.character for b in pool if b.character]
    return TurnLore(merge(selection, result, turn.hybrid, characters), result)
