"""Request and response models of the AI-authoring routes (generate, split).

Like :mod:`worldbook.api.schemas`, requests reject unknown fields and leave the DESIGN §6 limits
to the service, whose errors name the limit ("text to split into entries", "premise").
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from worldbook.service.generate import COUNT_DEFAULT, COUNT_MAX, COUNT_MIN, GeneratedBook
from worldbook.service.split_text import SplitOutcome

Seed = Field(default=None, ge=0, le=2**31 - 1, description="Repeatable sampling, where supported.")


class GenerateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    premise: str = Field(description="What the world is about (at most 2,000 characters).")
    count: int = Field(default=COUNT_DEFAULT, ge=COUNT_MIN, le=COUNT_MAX)
    language: str | None = Field(default=None, description="Write the book in this language.")
    seed: int | None = Seed


class DraftEntryOut(BaseModel):
    title: str
    lore: str
    aliases: list[str]
    canon: bool


class GeneratedBookOut(BaseModel):
    """A draft book, not saved: create it with POST /v1/books and its entries' batch route,
    or save the JSON and run ``worldbook import`` on it."""

    title: str
    description: str
    entries: list[DraftEntryOut]
    warnings: list[str]
    model: str

    @classmethod
    def of(cls, book: GeneratedBook) -> GeneratedBookOut:
        return cls.model_validate(book.to_json())


class SplitRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(description="At most 40,000 characters (the DESIGN §6 limit).")
    save: bool = Field(default=False, description="Add the entries to the book (default: dry run).")
    use_llm: bool = Field(
        default=True, description="false: cut by headings and paragraphs even with a model."
    )
    seed: int | None = Seed


class SplitEntryOut(BaseModel):
    title: str
    lore: str = Field(description="The original text of this entry, word for word.")
    aliases: list[str]
    separator: str = Field(description="The whitespace that followed this entry in the text.")
    id: str | None = Field(default=None, description="The new entry's id, when saved.")


class SplitOut(BaseModel):
    """``leading + "".join(e.lore + e.separator for e in entries)`` is the text sent."""

    entries: list[SplitEntryOut]
    leading: str
    warnings: list[str]
    method: Literal["llm", "headings"]
    model: str | None
    saved: bool

    @classmethod
    def of(cls, outcome: SplitOutcome) -> SplitOut:
        body: dict[str, Any] = outcome.to_json()
        return cls.model_validate(body)
