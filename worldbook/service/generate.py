"""Generate a draft world book from a premise with the app's language model
(docs/design/generate-and-split.md).

One call asks for ``count`` entries (4–16) with a JSON Schema; every entry is validated (types,
DESIGN §6 limits, and no title or alias that repeats another, folded with the selection's
Unicode-aware ``normalize``); rejected entries are sent back once for replacements
(:mod:`worldbook.service.llm_replies`). The result is a **draft**: nothing is saved. The app —
or ``worldbook import`` on the ``--json`` output — creates the book through the normal path, so
the limits are enforced there once more and the model is never on the write path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from worldbook.core.drafts import EntryDraft
from worldbook.core.entry_titles import clean_title
from worldbook.core.limits import LIMITS, check_text, validate_entry_draft
from worldbook.core.matching import normalize
from worldbook.errors import InvalidInput, LLMBadReply
from worldbook.llm_port import LLM, LLMMessage, LLMRequest
from worldbook.service.llm_replies import (
    JsonReply,
    ask_json,
    ask_repair,
    items_of,
    not_configured,
    repair_request,
    validate_item,
)

COUNT_MIN, COUNT_MAX, COUNT_DEFAULT = 4, 16, 8
PREMISE_MAX = 2_000  # as long as a book description (DESIGN §6)
LANGUAGE_MAX = 50
TOKENS_PER_ENTRY = 320  # ~5 sentences of lore plus title, aliases and JSON punctuation
SCHEMA_NAME = "world_book"

SYSTEM_PROMPT = (
    "You write world books for roleplay and story apps. A world book is a set of entries; each "
    "entry is one topic of the setting — a place, faction, character, object, event or rule. "
    "Each entry has a short noun-phrase title, aliases (other names the topic goes by; may be "
    "empty), lore (2 to 5 sentences of facts a storyteller needs, naming the topic), and canon "
    "(true only for the one or two facts every scene must know). Every title and alias must be "
    "different from all the others."
)


class EntryReply(BaseModel):
    """One entry as the model must send it (types here; the §6 limits are checked after)."""

    model_config = ConfigDict(extra="ignore")
    title: str
    lore: str
    aliases: list[str] = []
    canon: bool = False


def reply_schema(count: int) -> dict[str, Any]:
    """The JSON Schema sent to the model: tighter than the limits, to keep replies short."""
    text = {"type": "string"}
    entry = {
        "type": "object",
        "properties": {
            "title": {**text, "minLength": 2, "maxLength": 60},
            "aliases": {"type": "array", "items": {**text, "maxLength": 60}, "maxItems": 5},
            "lore": {**text, "minLength": 20, "maxLength": 1200},
            "canon": {"type": "boolean"},
        },
        "required": ["title", "aliases", "lore", "canon"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "title": {**text, "maxLength": LIMITS.book_title_max},
            "description": {**text, "maxLength": 500},
            "entries": {"type": "array", "items": entry, "minItems": count, "maxItems": count},
        },
        "required": ["title", "description", "entries"],
        "additionalProperties": False,
    }


@dataclass(slots=True)
class GeneratedBook:
    """A draft book: not saved; ``to_json`` is importable with ``worldbook import``."""

    title: str
    description: str
    entries: list[EntryDraft]
    warnings: list[str] = field(default_factory=list)
    model: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "description": self.description,
            "entries": [
                {"title": e.title, "lore": e.lore, "aliases": list(e.aliases), "canon": e.canon}
                for e in self.entries
            ],
            "warnings": list(self.warnings),
            "model": self.model,
        }


@dataclass(slots=True)
class _Collected:
    """Entries accepted so far and every folded title/alias they claim."""

    count: int
    entries: list[EntryDraft] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # normalize(name) -> owning title
    warnings: list[str] = field(default_factory=list)

    def take(self, raw: object, where: str) -> list[str]:
        """Accept one item, or return why not (the problems go back to the model)."""
        reply, problems = validate_item(EntryReply, raw, where)
        if reply is None:
            return problems
        title = " ".join(reply.title.split())
        draft = EntryDraft(title=title, lore=reply.lore.strip(), canon=reply.canon)
        try:
            validate_entry_draft(draft, field=where)
        except InvalidInput as exc:
            return [f"{exc.field}: {exc.message}" if exc.field else exc.message]
        key = normalize(title)
        if key in self.names:
            owner = self.names[key]
            return [f"{where}.title “{title}” is already a title or alias of “{owner}”"]
        if len(self.entries) >= self.count:
            return []  # more than asked for: quietly not taken
        self.names[key] = title
        draft.aliases = self._aliases(reply.aliases, title, key)
        if key not in normalize(draft.lore):
            self.warnings.append(f"the lore of “{title}” does not mention its title")
        self.entries.append(draft)
        return []

    def _aliases(self, proposed: list[str], title: str, own: str) -> list[str]:
        kept: list[str] = []
        for alias in (" ".join(a.split()) for a in proposed):
            key = normalize(alias)
            if not alias or key == own or alias in kept:
                continue
            if key in self.names:
                self.warnings.append(
                    f"alias “{alias}” of “{title}” dropped: it names “{self.names[key]}”"
                )
            elif len(alias) > LIMITS.alias_max or len(kept) >= LIMITS.aliases_max:
                self.warnings.append(f"alias “{alias[:40]}” of “{title}” dropped: over the limits")
            else:
                self.names[key] = title
                kept.append(alias)
        return kept

    def take_all(self, reply: JsonReply, label: str) -> list[str]:
        items, problems = items_of(reply, "entries")
        problems = [*reply.problems, *problems]
        for i, raw in enumerate(items):
            problems.extend(self.take(raw, f"entries[{i}]"))
        self.warnings.extend(f"{label}: {p}" for p in problems)
        return problems


def _check_inputs(premise: str, count: int, language: str | None) -> None:
    check_text(premise, field="premise", limit="premise", max_len=PREMISE_MAX, blank_ok=False)
    if not COUNT_MIN <= count <= COUNT_MAX:
        raise InvalidInput(
            f"count must be {COUNT_MIN}–{COUNT_MAX} entries; got {count}.", field="count"
        )
    if language is not None:
        check_text(language, field="language", limit="language", max_len=LANGUAGE_MAX)


def _request(
    llm: LLM, premise: str, count: int, language: str | None, seed: int | None, temperature: float
) -> LLMRequest:
    wanted = f"Write a world book of exactly {count} entries for this premise."
    if language:
        wanted += f" Write every title, alias, lore and the description in {language}."
    wanted += " Give the book a title and a one-sentence description."
    budget = min(llm.capabilities.max_output_tokens, TOKENS_PER_ENTRY * count + 200)
    return LLMRequest(
        messages=(
            LLMMessage("system", SYSTEM_PROMPT),
            LLMMessage("user", f"Premise: {premise}\n\n{wanted}"),
        ),
        schema=reply_schema(count),
        schema_name=SCHEMA_NAME,
        max_output_tokens=budget,
        temperature=temperature,
        seed=seed,
    )


def generate_book(
    llm: LLM | None,
    premise: str,
    *,
    count: int = COUNT_DEFAULT,
    language: str | None = None,
    seed: int | None = None,
    temperature: float = 0.8,
) -> GeneratedBook:
    """A draft book of 4–``count`` valid entries (``count`` when the model manages).

    Raises:
        LLMNotConfigured: ``llm`` is None (503, names WORLDBOOK_LLM_URL).
        InvalidInput: a bad premise, count or language.
        LLMBadReply: fewer than 4 usable entries even after the repair round.
        LanguageModelError / LLMUnavailable: the first call failed.
    """
    _check_inputs(premise, count, language)
    if llm is None:
        raise not_configured("generating a book")
    request = _request(llm, premise, count, language, seed, temperature)
    first = ask_json(llm, request)
    got = _Collected(count)
    problems = got.take_all(first, "first reply")
    if problems and len(got.entries) < count:
        missing = count - len(got.entries)
        taken = ", ".join(f"“{e.title}”" for e in got.entries) or "none yet"
        again = repair_request(
            request,
            first,
            problems,
            f"Reply with the same JSON shape holding only {missing} new entries that replace "
            f"the rejected ones (lore at least {LIMITS.lore_min} characters). Titles already "
            f"taken, not to be repeated: {taken}.",
        )
        # The replacements get their own schema: exactly `missing` entries, not `count`.
        again = replace(
            again,
            schema=reply_schema(missing),
            max_output_tokens=min(request.max_output_tokens, TOKENS_PER_ENTRY * missing + 200),
        )
        second, failed = ask_repair(llm, again)
        if second is not None:
            got.take_all(second, "repair reply")
        if failed:
            got.warnings.append(failed)
    if len(got.entries) < COUNT_MIN:
        reasons = "; ".join(got.warnings[:3]) or "no entries"
        raise LLMBadReply(
            f"The language model produced {len(got.entries)} usable entries; a book needs at "
            f"least {COUNT_MIN}. Problems: {reasons}. Try again, or use a stronger model."
        )
    if len(got.entries) < count:
        got.warnings.append(f"asked for {count} entries; {len(got.entries)} were usable")
    title, description = _book_fields(first, premise, got.warnings)
    return GeneratedBook(title, description, got.entries, got.warnings, llm.model)


def _book_fields(reply: JsonReply, premise: str, warnings: list[str]) -> tuple[str, str]:
    data = reply.data or {}
    raw_title = data.get("title") if isinstance(data.get("title"), str) else None
    title = clean_title(raw_title) if raw_title else None
    if title is None or len(title) > LIMITS.book_title_max:
        title = clean_title(premise) or "Generated world"
        warnings.append("the model gave no usable book title; it was taken from the premise")
    description = data.get("description") if isinstance(data.get("description"), str) else ""
    description = " ".join(str(description).split())
    if len(description) > LIMITS.book_description_max:
        description = description[: LIMITS.book_description_max - 1] + "…"
    return title, description
