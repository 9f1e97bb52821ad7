"""The turn contract: one typed request and one typed response, shared by the HTTP API, the
CLI and the library.

Requests are validated here, once: the API takes these models as bodies, the CLI builds them
from its options, and :func:`turn_of` turns each into the one typed turn
(:class:`~worldbook.core.turn_request.TurnRequest`) that the service carries to the core.
The response model :class:`SelectionOut` documents the selection JSON in ``/openapi.json``;
the JSON itself is built by :func:`worldbook.core.selection_json.selection_to_json` (plain
dicts, fast) and a test checks it validates against this model, so the two cannot drift.
Both world and classic lore fill the same shapes (``via`` says which path chose an entry).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from worldbook.core.profiles import resolve_profile
from worldbook.core.turn_request import BookSource, CastMember, ChatCounts, TurnKind, TurnRequest
from worldbook.core.types import Message, ModelProfile, Role
from worldbook.service.needs import Turns
from worldbook.service.turns import TurnResult, lookup, preview_sample, run_turn
from worldbook.settings import WorldbookSettings

ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
"""A worldbook id (books, entries): URL-safe, at most 64 characters."""
TargetId = Annotated[str, StringConstraints(min_length=1, max_length=255)]
"""An app's id for a character, story, novel, user or chat (free text, as the app spells it)."""
Name = Annotated[str, StringConstraints(min_length=1, max_length=255)]
TraceLevel = Literal["full", "summary"]
WholeChatCount = Annotated[int, Field(ge=0, le=1_000_000_000)]
"""A count over the whole chat, of which a turn may send only the recent messages."""


class Request(BaseModel):
    """Requests reject unknown fields: a misspelt field is a 422 naming it, never a no-op."""

    model_config = ConfigDict(extra="forbid")


class CastMemberIn(Request):
    id: TargetId
    name: Name | None = Field(default=None, description="Labels lore and fills {{char}}.")
    owner: TargetId | None = Field(
        default=None,
        description="The user whose attachments of this character count (default: the "
        "cast's owner, else the acting user).",
    )


class MessageIn(Request):
    role: Role
    content: str
    name: Name | None = None


class TurnBooks(Request):
    """Where the turn's books come from: explicit ids, a cast, or both (ids first)."""

    book_ids: list[Id] = Field(default_factory=list, max_length=100)
    story_id: TargetId | None = None
    novel_id: TargetId | None = None
    characters: list[CastMemberIn] = Field(default_factory=list, max_length=100)
    owner: TargetId | None = Field(
        default=None,
        description="Whose attachments the cast resolves (default: the acting user). "
        "Attachments belong to the user who made them.",
    )


class ModelIn(Request):
    """The target model: a known name fills the rest; explicit fields win."""

    model: str | None = Field(default=None, max_length=200)
    input_window: int | None = Field(default=None, ge=1, le=100_000_000)
    tokenizer: str | None = Field(
        default=None,
        max_length=200,
        description="A tiktoken encoding, estimate[:chars-per-token=N], or hf:<name> of a "
        "tokenizer the operator configured; never a file path.",
    )
    supports_tools: bool | None = None


class TurnOptions(Request):
    """Per-turn options shared by select, preview and lookup."""

    chat_id: TargetId | None = Field(
        default=None, description="The chat this turn belongs to (classic chat state, logs)."
    )
    user_name: Name | None = Field(default=None, description="Fills {{user}} in lore.")
    chat_length: WholeChatCount | None = Field(
        default=None,
        description="Messages in the whole chat when only recent ones are sent (classic "
        "sticky / cooldown / delay count on it); default: the messages sent.",
    )
    assistant_messages: WholeChatCount | None = Field(
        default=None,
        description="The whole chat's assistant messages (@@activate_only_after / _every); "
        "default: counted in the messages sent.",
    )
    greeting_index: int | None = Field(
        default=None,
        ge=0,
        le=1_000,
        description="The chat's greeting: 0 = first message, k = alternate greeting k "
        "(@@is_greeting); default: unknown.",
    )


class SelectRequest(TurnBooks, ModelIn, TurnOptions):
    messages: list[MessageIn] = Field(max_length=1000)
    trace: TraceLevel = Field(
        default="full",
        description="full: one record per entry considered; summary: records of what went "
        "in, plus one count per book and decision.",
    )


class PreviewRequest(TurnBooks, ModelIn, TurnOptions):
    """A sample user message, or a short chat (at most 2,000 characters in all)."""

    message: str | None = None
    messages: list[MessageIn] | None = Field(default=None, max_length=50)
    trace: TraceLevel = "full"


class LookupRequest(TurnBooks, ModelIn, TurnOptions):
    """The tool call: the entry's title (or an alias) as the model asked, or its id."""

    title: str | None = Field(default=None, max_length=1000)
    entry_id: Id | None = None


def source_of(body: TurnBooks) -> BookSource:
    """The core's book source for a request."""
    return BookSource(
        book_ids=tuple(body.book_ids),
        story_id=body.story_id,
        novel_id=body.novel_id,
        characters=tuple(CastMember(c.id, c.name, c.owner) for c in body.characters),
        owner=body.owner,
    )


def profile_of(settings: WorldbookSettings, body: ModelIn) -> ModelProfile:
    """The model profile for a request: explicit fields, then a known model, then defaults."""
    return resolve_profile(
        body.model,
        input_window=body.input_window,
        tokenizer=body.tokenizer,
        supports_tools=body.supports_tools,
        default_window=settings.default_input_window,
        default_tokenizer=settings.tokenizer,
    )


def messages_of(items: list[MessageIn]) -> tuple[Message, ...]:
    return tuple(Message(role=m.role, content=m.content, name=m.name) for m in items)


def turn_of(
    settings: WorldbookSettings,
    user_id: str,
    body: SelectRequest | PreviewRequest | LookupRequest,
) -> TurnRequest:
    """The one typed turn a request body becomes (HTTP and CLI alike); the kind follows the
    body. A preview's sample is checked here (DESIGN §6 "preview message")."""
    if isinstance(body, SelectRequest):
        kind, messages = TurnKind.SELECT, messages_of(body.messages)
    elif isinstance(body, PreviewRequest):
        listed = messages_of(body.messages) if body.messages is not None else None
        kind, messages = TurnKind.PREVIEW, preview_sample(body.message, listed)
    else:
        kind, messages = TurnKind.LOOKUP, ()
    return TurnRequest(
        user_id=user_id,
        source=source_of(body),
        profile=profile_of(settings, body),
        messages=messages,
        chat_id=body.chat_id,
        user_name=body.user_name,
        counts=ChatCounts(body.chat_length, body.assistant_messages, body.greeting_index),
        kind=kind,
    )


def run_select(services: Turns, user_id: str, body: SelectRequest) -> TurnResult:
    """``POST /v1/select`` and ``worldbook select``: one real turn."""
    return run_turn(services, turn_of(services.settings, user_id, body))


def run_preview(services: Turns, user_id: str, body: PreviewRequest) -> TurnResult:
    """``POST /v1/preview`` and ``worldbook preview``: the same selection, nothing counted."""
    return run_turn(services, turn_of(services.settings, user_id, body))


def run_lookup(services: Turns, user_id: str, body: LookupRequest) -> LookupOut:
    """``POST /v1/lookup``: the tool call, answered from the turn's books."""
    turn = turn_of(services.settings, user_id, body)
    found = lookup(services, turn, title=body.title, entry_id=body.entry_id)
    return LookupOut(
        book_id=found.book_id, entry_id=found.entry_id, title=found.title, lore=found.lore
    )


# --- the response ----------------------------------------------------------------------------


class EntryRefOut(BaseModel):
    """``E``: an entry's id, book, title, full lore tokens, and the character it came with."""

    entry_id: str
    book_id: str
    title: str
    tokens: int
    character: str | None


Via = Literal[
    "canon", "whole_book", "literal", "semantic", "order", "constant", "keyword", "recursion"
]


class InjectedOut(EntryRefOut):
    """An entry that reaches the model in full (or cut): how, its exact text and role."""

    via: Via
    truncated: bool
    cost: int = Field(description="Tokens charged to the budget (of the text as sent).")
    role: Role = Field(description="The message role it renders with (classic lore).")
    text: str = Field(description="The exact text sent (cut, macros and decorators applied).")


class IndexLineOut(EntryRefOut):
    line: str
    linked: bool
    cost: int


class CanonOut(BaseModel):
    budget: int
    tokens: int
    entries: list[EntryRefOut]
    over_budget: list[EntryRefOut]


class TraceOut(BaseModel):
    """One record per entry considered (``entry_id`` empty for a book-level record)."""

    entry_id: str
    book_id: str
    title: str
    decision: Literal["canon", "injected", "index", "left_out"]
    reason: str


class ChatMessageOut(BaseModel):
    role: Role
    content: str


class AnthropicOut(BaseModel):
    system: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    messages: list[ChatMessageOut] | None = Field(
        default=None,
        description="Lorebook entries with a user or assistant role, for the head of the "
        "conversation (Anthropic has no system messages inside it); absent when none.",
    )


class LorebookOut(BaseModel):
    """The classic lorebook slot: its budget (the highest of the turn's classic books) and
    what its entries used (0 and 0 without classic books)."""

    budget: int = 0
    tokens: int = 0


class LivingWorldOut(BaseModel):
    """Where this turn's ``lore_create`` / ``lore_append`` calls go (``POST /v1/writes``)."""

    book_id: str


class SelectionOut(BaseModel):
    """The selection of one turn and its rendering (OpenAI ``messages``/``tools`` and
    Anthropic ``system``/``tools``)."""

    canon: CanonOut
    whole_books: list[str]
    per_turn_budget: int
    per_turn_tokens: int
    lorebook: LorebookOut = Field(default_factory=LorebookOut)
    injected: list[InjectedOut] = Field(
        description="In render order: whole books, the lorebook slot (via constant, keyword, "
        "recursion), per-turn lore."
    )
    index: list[IndexLineOut]
    fallback_books: list[str]
    notes: list[str]
    messages: list[ChatMessageOut]
    tools: list[dict[str, Any]]
    anthropic: AnthropicOut
    trace: list[TraceOut]
    trace_level: TraceLevel = "full"
    living_world: LivingWorldOut | None = Field(
        default=None,
        description="Present when the tools include lore_create and lore_append: the acting "
        "user owns a book of this turn with settings.living_world on, and the model takes "
        "tools. Forward those calls to POST /v1/writes with this book_id.",
    )


class LookupOut(BaseModel):
    book_id: str
    entry_id: str
    title: str
    lore: str
