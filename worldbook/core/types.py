"""Plain data the pure core takes and returns.

These types are the contract between the core (selection, matching, budgets, rendering) and the
service layer that loads books from the store and asks the vector index for neighbours.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

Role = Literal["user", "assistant", "system"]


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message of the turn, oldest first in a turn's list."""

    role: Role
    content: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What the target model can take: its input window, tokenizer and tool support."""

    input_window: int
    tokenizer_id: str = "cl100k_base"
    supports_tools: bool = False


@dataclass(frozen=True, slots=True)
class SelectionRules:
    """The DESIGN §2 budget table. Built from settings at the entry points."""

    canon_share: float = 0.10
    canon_cap: int = 4000
    per_turn_cap: int = 2000
    full_entries_max: int = 5
    full_entry_tokens_max: int = 800
    index_topics_max: int = 12
    index_linked_max: int = 6
    literal_max: int = 8
    literal_from_replies_max: int = 4
    semantic_messages: int = 6
    mostly_indexed_share: float = 0.8
    canon_heavy_share: float = 0.5
    index_gist_tokens_max: int = 24  # ADR 0013: shorter lines keep ~2x more topics listed
    named_cut_min_tokens: int = 150  # a named entry is cut to what is left if at least this
    # --- ADR 0013: how full entries and the world index share the per-turn budget ---
    full_score_share: float = 0.65  # a meaning-ranked entry goes in full only at >= this x best
    index_reserve_lines: int = 1  # an unnamed entry in full leaves room for this many lines
    index_title_fallback: bool = True  # a line whose gist does not fit goes as its title alone
    literal_stem_languages: tuple[str, ...] = ()  # Snowball stemmers of the inflected-name tier


class IndexStatus(StrEnum):
    """Where an entry is in background indexing (persisted as these strings)."""

    QUEUED = "queued"
    INDEXING = "indexing"
    INDEXED = "indexed"
    FAILED = "failed"


class Visibility(StrEnum):
    PRIVATE = "private"
    UNLISTED = "unlisted"
    PUBLIC = "public"


class BookMode(StrEnum):
    """world: DESIGN §2 (canon, whole book, names, meaning); classic: DESIGN §3 (keys);
    hybrid: a world book whose entries with keys also activate by keyword (their activations
    join the turn's classic pool, see docs/decisions.md)."""

    WORLD = "world"
    CLASSIC = "classic"
    HYBRID = "hybrid"


@dataclass(frozen=True, slots=True)
class LoreEntry:
    """An entry as the selection core sees it.

    ``tokens`` is the token count of ``lore`` under the turn's tokenizer (cached by the service
    by content hash and tokenizer id). ``indexed`` is true only when a vector of the active model
    for the entry's current text exists.
    """

    id: str
    book_id: str
    title: str
    lore: str
    tokens: int
    aliases: tuple[str, ...] = ()
    canon: bool = False
    enabled: bool = True
    indexed: bool = False


@dataclass(frozen=True, slots=True)
class LoreBook:
    """A resolved book of the turn, entries in list order.

    ``character`` names the character whose attachment brought the book in (None for
    story/novel books and explicit book ids); group chats label lore with it.
    ``version`` changes whenever the book or any entry changes (derived caches key on it).
    ``matcher_id`` / ``matcher_version`` name its literal matcher when they differ from the id
    and version: a view with names filled in (macros, ADR 0012) whose titles and aliases are
    those of the stored book shares its automaton; one whose names changed gets its own.
    """

    id: str
    title: str
    entries: tuple[LoreEntry, ...]
    character: str | None = None
    version: str = ""
    matcher_id: str = ""
    matcher_version: str = ""
    readers: tuple[str, ...] = ()  # the book's reader languages: its glosses' (ADR 0023)

    def labelled(self, character: str | None) -> LoreBook:
        """This book as it came with ``character`` (itself when None)."""
        return replace(self, character=character) if character else self

    @property
    def matcher_key(self) -> tuple[str, str]:
        """(family, version) of the literal matcher of this book."""
        return (self.matcher_id or self.id, self.matcher_version or self.version)

    def indexed_share(self) -> float:
        """Share of enabled entries that have a current vector (1.0 for an empty book)."""
        enabled = [e for e in self.entries if e.enabled]
        if not enabled:
            return 1.0
        return sum(1 for e in enabled if e.indexed) / len(enabled)


@dataclass(frozen=True, slots=True)
class SemanticHit:
    """One nearest-neighbour result from the vector index (higher score = closer)."""

    book_id: str
    entry_id: str
    score: float
    lift: float = 0.0
    """The part of ``score`` that is not the messages' meaning (the referent links of ADR
    0016): the full-score share compares with the turn's best score without it (ADR 0021)."""
    gloss: str = ""
    """The reader language whose generated gloss gave the primary view's score (ADR 0023), so
    the trace can say so; empty when the entry's own text did."""


def rescored(
    scores: Iterable[tuple[tuple[str, str], float]], found: Sequence[SemanticHit]
) -> list[SemanticHit]:
    """Hits with new ``scores`` (``((book_id, entry_id), score)``, in the order given), each
    keeping what its first hit in ``found`` carries (the links' lift, the gloss that found it);
    a key ``found`` lacks becomes a plain hit. Every step that re-scores hits (fusion, links,
    diversification) builds them here, so no such field is lost on the way."""
    by_key: dict[tuple[str, str], SemanticHit] = {}
    for hit in found:
        by_key.setdefault((hit.book_id, hit.entry_id), hit)
    return [
        replace(by_key[key], score=score)
        if key in by_key
        else SemanticHit(book_id=key[0], entry_id=key[1], score=score)
        for key, score in scores
    ]


SemanticSearch = Callable[[tuple[str, ...]], tuple[SemanticHit, ...]]
"""The nearest entries of these books to the turn's conversation, best first (DESIGN §2 rule
5, "close in meaning"). The service's search embeds the last messages and asks the vector
index; the core calls it once, with the books that will not travel whole."""


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything the world selection needs to decide one turn: the books, the messages, the
    model, and the meaning search — static ``semantic_hits``, or a ``search`` the selection
    calls with its large books (then ``semantic_hits`` is ignored)."""

    books: tuple[LoreBook, ...]
    messages: tuple[Message, ...]
    profile: ModelProfile
    semantic_hits: tuple[SemanticHit, ...] = ()
    search: SemanticSearch | None = None


class Via(StrEnum):
    """How an entry reached the model."""

    CANON = "canon"
    WHOLE_BOOK = "whole_book"
    LITERAL = "literal"
    SEMANTIC = "semantic"
    ORDER = "order"
    # Classic lore (DESIGN §3), rendered in the one lorebook slot: without keys (constant,
    # ``@@activate``, sticky), by a key in the chat, or by a key in recursed content.
    CONSTANT = "constant"
    KEYWORD = "keyword"
    RECURSION = "recursion"


CLASSIC_VIAS = frozenset({Via.CONSTANT, Via.KEYWORD, Via.RECURSION})
"""The vias of classic activations: they render in the lorebook slot."""


class Decision(StrEnum):
    """What the trace says happened to one considered entry."""

    CANON = "canon"
    INJECTED = "injected"
    INDEXED = "index"
    LEFT_OUT = "left_out"


@dataclass(frozen=True, slots=True)
class EntryRef:
    """The short form of an entry in a selection (the ``E`` of the CLI's JSON)."""

    entry_id: str
    book_id: str
    title: str
    tokens: int
    character: str | None = None


@dataclass(frozen=True, slots=True)
class LoreText:
    """The exact text one entry sends to the model and its token count under the turn's
    tokenizer: the one value the budget charges, the selection reports and rendering sends
    (DESIGN §2 budget table). Made only by :func:`worldbook.core.truncation.cut_to_tokens`
    (which counts what it cuts) and :meth:`whole` (an entry's lore, counted with it), so a text
    and its count cannot come apart. ``truncated``: the text is shorter than the entry's lore."""

    text: str
    tokens: int
    truncated: bool = False

    @classmethod
    def whole(cls, entry: LoreEntry) -> LoreText:
        """The entry's lore as it is (``entry.tokens`` is that lore's count)."""
        return cls(entry.lore, entry.tokens, False)


@dataclass(frozen=True, slots=True)
class InjectedEntry:
    """An entry that reaches the model in full (or cut to the per-entry cap).

    ``body`` is what is sent and charged; ``ref.tokens`` is the entry's full lore."""

    ref: EntryRef
    body: LoreText
    via: Via
    role: Role = "system"  # the message role it renders with (classic entries may differ)

    @property
    def text(self) -> str:
        return self.body.text

    @property
    def tokens(self) -> int:
        """Tokens of ``text``: what the budget was charged."""
        return self.body.tokens

    @property
    def truncated(self) -> bool:
        return self.body.truncated


@dataclass(frozen=True, slots=True)
class IndexLine:
    """One line of the world index: a topic that exists but did not fit in full."""

    ref: EntryRef
    line: str
    linked: bool = False
    tokens: int = 0  # tokens of ``line``, charged against the per-turn budget


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """One record per entry considered: included how, or left out why."""

    entry_id: str
    book_id: str
    title: str
    decision: Decision
    reason: str


@dataclass(frozen=True, slots=True)
class Selection:
    """The result of one turn (DESIGN §1 'Selection').

    ``canon`` and the whole-book part of ``injected`` form the stable prefix; the rest is
    per-turn lore. ``fallback`` says why a book used list order instead of meaning.
    """

    canon_budget: int
    canon_tokens: int
    canon: tuple[InjectedEntry, ...]
    canon_over_budget: tuple[EntryRef, ...]
    whole_books: tuple[str, ...]
    per_turn_budget: int
    injected: tuple[InjectedEntry, ...]
    index: tuple[IndexLine, ...]
    trace: tuple[TraceRecord, ...]
    supports_tools: bool = False
    notes: tuple[str, ...] = field(default=())
    per_turn_tokens: int = 0  # what injected large-book lore and index lines used
    fallback_books: tuple[str, ...] = ()  # large books that used list order this turn
    characters: tuple[str, ...] = ()  # distinct characters of the turn's books, in book order
    # The classic lorebook slot (DESIGN §3): its token budget (the highest of the turn's
    # classic books) and what its activations used; both 0 when the turn has no classic book.
    lorebook_budget: int = 0
    lorebook_tokens: int = 0

    @property
    def group_chat(self) -> bool:
        """More than one character brought books: lore is labelled with its character."""
        return len(self.characters) > 1
