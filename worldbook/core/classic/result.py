"""What a classic turn returns: activations in render order, a trace record for every entry,
the budget used and the chat's next state (docs/classic.md §1, DESIGN §2 "Selection")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from worldbook.core.classic.model import ClassicRole
from worldbook.core.classic.state import ChatState

# How an injected entry got in: by a key in the chat, by a key in recursed content, or without
# keys (constant, ``@@activate``, an active sticky, ``@@keep_activate_after_match``).
Via = Literal["constant", "keyword", "recursion"]
# The finer cause, for the trace and the request log.
Cause = Literal[
    "constant", "decorator", "sticky", "kept", "keyword", "recursion", "min_activations"
]
Fate = Literal[
    "injected",  # reached the model
    "over_budget",  # activated, dropped by the token budget (classic.md §1 rule 25)
    "probability",  # activated, lost its probability draw (rule 15)
    "group",  # activated, lost its inclusion group (§2.5)
    "cooldown",  # timed effect (§2.6)
    "delay",  # timed effect (§2.6)
    "recursion",  # waits for a recursion (level) or is excluded from recursion
    "disabled",  # rule 13
    "no_match",  # no key (rule 5) or no keys at all
    "secondary",  # primary matched, secondary logic / @@additional_keys / @@exclude_keys failed
    "decorator",  # @@dont_activate, @@activate_only_after/every, @@is_greeting, …
    "empty",  # activated but nothing to render
    "elsewhere",  # already in the prompt by another path (ClassicTurn.skip)
]
HitSource = Literal["message", "content"]


@dataclass(frozen=True, slots=True)
class KeyHit:
    """One key found: in chat message ``message`` (index into the turn's messages, oldest first)
    or in the content of entry ``from_entry`` (recursion), seen in pass ``pass_no``."""

    key: str
    secondary: bool
    source: HitSource
    message: int | None = None
    from_book: str | None = None
    from_entry: str | None = None
    from_title: str | None = None

    def describe(self) -> str:
        kind = "secondary key" if self.secondary else "key"
        if self.source == "message":
            return f"{kind} {self.key!r} in message {self.message}"
        return f"{kind} {self.key!r} in the content of {self.from_title!r}"


@dataclass(frozen=True, slots=True)
class Activation:
    """An entry that reaches the model, as it is rendered (its own message with its role)."""

    book_id: str
    entry_id: str
    title: str
    text: str  # content without decorator lines, trimmed (rule 27)
    role: ClassicRole
    via: Via
    cause: Cause
    tokens: int
    order: int
    priority: int
    pass_no: int  # 1 = chat scan, 2–3 = recursion; sweeps of min activations count on from 4
    hits: tuple[KeyHit, ...]
    reason: str
    character: str | None = None


@dataclass(frozen=True, slots=True)
class TraceRecord:
    """The fate of one classic entry of the turn, with a human reason."""

    book_id: str
    entry_id: str
    title: str
    fate: Fate
    reason: str
    priority: int
    order: int
    pass_no: int | None = None
    tokens: int | None = None
    hits: tuple[KeyHit, ...] = ()


@dataclass(frozen=True, slots=True)
class ClassicResult:
    """``activations`` in render order; ``trace`` has one record per entry of every book, in
    book order then list order; ``state`` is the chat's next state — a real turn writes it in
    its transaction, a preview discards it."""

    activations: tuple[Activation, ...]
    trace: tuple[TraceRecord, ...]
    budget: int
    used: int
    passes: int
    state: ChatState
    notes: tuple[str, ...] = ()
