"""One turn as the app asks for it (DESIGN §1 "Turn"): where its books come from, the recent
messages with roles and speaker names, the model profile, the chat, and what kind of turn it is.

Built once at the edge — the HTTP body (``worldbook.service.contract``), the CLI's options, a
library call — and carried unchanged through the service into the core
(:class:`worldbook.core.turn.ResolvedTurn` holds it next to the loaded books). Plain values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from worldbook.core.types import Message, ModelProfile


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
class ChatCounts:
    """The whole chat's counts when the app sends only its recent messages (classic timed
    effects clock on ``chat_length``; ``@@activate_only_*`` count ``assistant_messages``;
    ``@@is_greeting`` reads ``greeting_index``). None: counted over the messages sent."""

    chat_length: int | None = None
    assistant_messages: int | None = None
    greeting_index: int | None = None


class TurnKind(StrEnum):
    """What the turn is for. All three run the same selection (DESIGN §2 rule 8)."""

    SELECT = "select"  # a real turn: counts usage, writes chat state and the request log
    PREVIEW = "preview"  # an author's sample: nothing written; names not given are stand-ins
    LOOKUP = "lookup"  # the model's tool call: the turn's books, names as the turn showed them


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """One turn: who asks, for which books, over which messages, for which model."""

    user_id: str
    source: BookSource
    profile: ModelProfile
    messages: tuple[Message, ...] = ()
    chat_id: str | None = None
    user_name: str | None = None
    counts: ChatCounts = field(default_factory=ChatCounts)
    kind: TurnKind = TurnKind.SELECT

    @property
    def is_real(self) -> bool:
        """A real turn counts usage and writes its chat's state and log."""
        return self.kind is TurnKind.SELECT

    @property
    def stand_in_names(self) -> bool:
        """A preview shows names the request did not give as stand-ins ("User")."""
        return self.kind is TurnKind.PREVIEW
