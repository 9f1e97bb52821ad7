"""The retrieval tunables of :class:`worldbook.settings.WorldbookSettings`: how a turn ranks
lore by meaning in real conversations (ADR 0003, ADR 0013) and the cross-lingual views and
referents (ADR 0016, ADR 0021, ADR 0023).

A base class of the one settings object, not a second object: the fields keep their flat
``WORLDBOOK_`` names and are read only where the settings are built.
"""

from __future__ import annotations

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetrievalSettings(BaseSettings):
    """How the meaning search ranks entries; inherited by ``WorldbookSettings``."""

    model_config = SettingsConfigDict(env_prefix="WORLDBOOK_", env_file=None, extra="ignore")

    # --- retrieval in real conversations (ADR 0003, ADR 0013) ---
    language_correction: bool = Field(
        default=True,
        description="Remove the language component from query and entry vectors for models "
        "that ship a language basis (e5-small): a question in one language finds lore written "
        "in another. Stored vectors stay raw.",
    )
    language_centring_shrink: float = Field(
        default=20.0,
        ge=0,
        description="Per-language centring of a book's rows moves a language with n entries by "
        "n / (n + this) of its offset (a language with a handful of entries barely moves).",
    )
    query_recency_decay: float = Field(
        default=0.8,
        gt=0,
        le=1,
        description="Weight of a message one step older in the conversation query "
        "(decay ** age): follow-ups keep the topic of the messages before them.",
    )
    full_score_share: float = Field(
        default=0.65,
        ge=0,
        le=1,
        description="An entry found by meaning goes in full only if its score is at least this "
        "share of the turn's best meaning score; weaker ones become world-index lines.",
    )
    index_reserve_lines: int = Field(
        default=1,
        ge=0,
        description="An entry found by meaning goes in full only if the world-index lines of "
        "this many ranks below it still fit the per-turn budget after it.",
    )
    index_title_fallback: bool = Field(
        default=True,
        description="A world-index line whose gist does not fit the per-turn budget is listed "
        "by its title alone when that fits (the lookup tool can still fetch the entry).",
    )
    literal_stem_languages: tuple[str, ...] = Field(
        default=(),
        description="Snowball stemmers (e.g. russian, german) of the optional inflected-name "
        "tier: 'в Зарянске' names the entry 'Зарянск'. Off by default: measured, it did not "
        "pay on the hard sets (docs/decisions.md).",
    )
    index_gist_tokens_max: int = Field(
        default=24,
        ge=0,
        description="Tokens of the one-sentence gist on a world-index line (cut with an ellipsis).",
    )

    # --- cross-lingual views and referents (docs/adr/0016) --------------------------------
    aligned_embedder: str = Field(
        default="auto",
        description="The cross-lingually aligned second view: auto (use-m3 when its package is "
        "installed and the embedder is a real model other than it), none, or an embedder spec.",
    )
    aligned_weight: float = Field(
        default=1.0, ge=0, le=10, description="Weight of the aligned view in the fused search."
    )
    aligned_cross_weight: float | None = Field(
        default=2.0,
        ge=0,
        le=10,
        description="Weight of the aligned view for entries written in another language than "
        "the conversation; unset (empty): the aligned weight. ADR 0021 addendum: 2 gains 3 "
        "gold entries of 202 on the hard sets and loses 0.019 LAReQA mAP@20.",
    )
    glosses: bool = Field(
        default=True,
        description="With a language model configured, write each entry's name and gist in its "
        "book's reader_languages after indexing and search them (ADR 0023); false: never.",
    )
    gloss_margin: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="How far below its own match a gloss ranks an entry: a gloss lifts an entry "
        "to its score minus this (ADR 0023).",
    )
    referent_link_weight: float = Field(
        default=2.0,
        ge=0,
        le=10,
        description="Boost of entries whose lore names what the recent messages named "
        "(follow-ups); 0 turns it off.",
    )
    referent_fade: float = Field(
        default=0.85, gt=0, le=1, description="A referent's weight per message further back."
    )
    referent_previous_turns: int = Field(
        default=0,
        ge=0,
        le=50,
        description="With a chat id, what this many previous turns of the chat put in full "
        "are referents too (ADR 0021; read from the request log); 0 turns it off.",
    )
    full_share_without_links: bool = Field(
        default=True,
        description="The full-score share (ADR 0013) compares with the turn's best meaning "
        "score without the referent links' lift (ADR 0021).",
    )
    diversity: float = Field(
        default=0.0,
        ge=0,
        le=10,
        description="Strength of the diversified meaning ranking (ADR 0021): a hit's score "
        "loses this x the scores' spread x its similarity to a better hit; 0 turns it off.",
    )

    @field_validator("aligned_cross_weight", mode="before")
    @classmethod
    def _blank_weight_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value
