"""The plain data a classic (keyword) turn takes: books, entries, settings and the turn itself.

Field meanings follow docs/classic.md §1 (the contract) and §2.1 (SillyTavern's entry model);
defaults are the ones a SillyTavern / CCv3 author expects unless the docs say otherwise. The
service builds these from stored entries; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

ClassicRole = Literal["user", "assistant", "system"]
ROLES: tuple[ClassicRole, ...] = ("system", "user", "assistant")

# SillyTavern ``world_info_logic`` (classic.md §1 rule 12).
AND_ANY = 0
NOT_ALL = 1
NOT_ANY = 2
AND_ALL = 3
LOGIC_NAMES = {AND_ANY: "and_any", NOT_ALL: "not_all", NOT_ANY: "not_any", AND_ALL: "and_all"}

MAX_PASSES = 3  # classic.md §1 rule 23: the chat scan + 2 recursive passes
MAX_SCAN_DEPTH = 1000  # SillyTavern MAX_SCAN_DEPTH; the API limits books to 100
DEFAULT_GROUP_WEIGHT = 100  # SillyTavern DEFAULT_WEIGHT


class ChatMessage(Protocol):
    """One chat message (``worldbook.core.types.Message`` fits): only ``content`` is scanned."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ClassicSettings:
    """A classic book's settings (DESIGN §3) and its defaults for entries that say nothing.

    ``scan_depth`` 2 and ``recursive_scanning`` off are SillyTavern's code defaults;
    ``whole_words`` on is its new-install default and DESIGN's ``feu`` ≠ ``feuille``.
    ``min_activations`` 0 = off; ``min_activations_depth_max`` 0 = up to the whole chat.
    """

    scan_depth: int = 2
    token_budget: int = 2000
    recursive_scanning: bool = False
    case_sensitive: bool = False
    whole_words: bool = True
    group_scoring: bool = False
    min_activations: int = 0
    min_activations_depth_max: int = 0


@dataclass(frozen=True, slots=True)
class ClassicEntry:
    """One classic entry (SillyTavern World Info / CCv3 lorebook entry semantics).

    ``content`` is the lore without decorator lines; ``decorators`` are the raw ``@@`` lines
    (leading ``@@`` lines left in ``content`` are split off too). ``None`` means "use the book's
    setting" for ``whole_words``, ``case_sensitive``, ``scan_depth`` and ``group_scoring``;
    ``priority`` None = the entry's ``order`` (classic.md §5 item 5). ``use_regex`` None = the
    shape rule (``/pattern/flags`` is a regex), True = every key is a regex, False = every key
    is plain text. ``delay_until_recursion`` 0 = off, n ≥ 1 = recursion level n (True = 1).
    ``tokens`` is the rendered content's token count under the turn's tokenizer (None: the
    engine counts it with the turn's ``count_tokens``). ``revision`` changes when the entry
    changes; timed effects set by an older revision are dropped (SillyTavern's entry hash).
    """

    id: str
    book_id: str
    title: str
    content: str
    position: int = 0
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    selective: bool = True
    selective_logic: int = AND_ANY
    constant: bool = False
    enabled: bool = True
    order: int = 100
    priority: int | None = None
    role: ClassicRole = "system"
    whole_words: bool | None = None
    case_sensitive: bool | None = None
    probability: int = 100
    scan_depth: int | None = None
    decorators: tuple[str, ...] = ()
    use_regex: bool | None = None
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: int = 0
    group: str = ""
    group_override: bool = False
    group_weight: int = DEFAULT_GROUP_WEIGHT
    group_scoring: bool | None = None
    sticky: int | None = None
    cooldown: int | None = None
    delay: int | None = None
    tokens: int | None = None
    revision: str = ""

    @property
    def groups(self) -> tuple[str, ...]:
        """Inclusion groups: a comma list, trimmed, empties dropped (SillyTavern ``/,\\s*/``)."""
        return tuple(dict.fromkeys(g.strip() for g in self.group.split(",") if g.strip()))


@dataclass(frozen=True, slots=True)
class ClassicBook:
    """A classic book of the turn, entries in list order.

    ``cache_key`` names this exact version of the book and everything substituted into it (the
    chat's names once ``{{char}}`` macros are replaced): the compiled matcher is cached on
    ``(id, cache_key, settings)``. An empty key is never cached. ``character`` labels the lore
    in group chats (DESIGN §2 rule 2). ``family`` names what the versions of one book have in
    common (the service: its mode, tokenizer and substituted names): a new version of a book
    whose family was compiled before is compiled from the latest one (only its changed
    entries); empty: always compiled from scratch.
    """

    id: str
    title: str
    entries: tuple[ClassicEntry, ...]
    settings: ClassicSettings = field(default_factory=ClassicSettings)
    cache_key: str = ""
    character: str | None = None
    family: str = ""

    def labelled(self, character: str | None) -> ClassicBook:
        """This book as it came with ``character`` (itself when None)."""
        return replace(self, character=character) if character else self


@dataclass(frozen=True, slots=True)
class ClassicTurn:
    """One classic selection request.

    ``messages`` are the chat, oldest first; system messages are not scanned (SillyTavern
    ``chatForWI``). ``chat_length`` is the number of messages of the whole chat (None: the
    scanned messages here) — it clocks sticky / cooldown / delay and keys the seeded draws;
    ``assistant_messages`` is the chat's assistant-message count for ``@@activate_only_after``
    / ``@@activate_only_every`` (None: counted here). ``greeting_index`` is the active greeting
    (0 = first message, k = alternate greeting k) for ``@@is_greeting``; None = unknown.
    ``budget`` None = the highest ``token_budget`` of the books (DESIGN §3). ``seed`` varies
    every draw (probability, inclusion groups); the same inputs give the same draws anywhere.
    ``skip`` names (book id, entry id) pairs already in the prompt by another path (a hybrid
    book's entry the world selection sent in full): never activated, never charged, fate
    ``elsewhere``.
    """

    books: tuple[ClassicBook, ...]
    messages: Sequence[ChatMessage]
    count_tokens: Callable[[str], int]
    chat_id: str | None = None
    chat_length: int | None = None
    assistant_messages: int | None = None
    greeting_index: int | None = None
    budget: int | None = None
    seed: int | str = 0
    skip: frozenset[tuple[str, str]] = frozenset()

    def resolved_budget(self) -> int:
        if self.budget is not None:
            return self.budget
        return max((b.settings.token_budget for b in self.books), default=0)

    def resolved_chat_length(self) -> int:
        return self.chat_length if self.chat_length is not None else len(self.messages)

    def resolved_assistant_messages(self) -> int:
        if self.assistant_messages is not None:
            return self.assistant_messages
        return sum(1 for m in self.messages if m.role == "assistant")
