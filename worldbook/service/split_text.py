"""Split a text into entries, word for word (docs/ai-authoring.md §4).

The model never rewrites the text: it sees the numbered paragraphs (previews sized to its
context window) and proposes only titles, aliases and paragraph ranges. Proposals are
validated (ranges in bounds, in order, not overlapping; titles within the limits), sent back
once with their problems, and the surviving ranges are handed to the pure splitter
(:func:`worldbook.core.splitting.split_text`), which slices the original text, groups what the
model left out by headings, and enforces the DESIGN §6 limits. With no model configured — or
when the model fails — headings and paragraphs decide, and a warning says so.

Saving goes through a narrow ``add_entries`` callable (the normal path: owner check, limits,
indexing); nothing is written when the text is over the limit or a check fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from worldbook.core import splitting
from worldbook.core.drafts import EntryDraft
from worldbook.core.entry_titles import clean_title
from worldbook.core.types import BookMode
from worldbook.errors import LLM_FAILURES, WorldbookError
from worldbook.llm_port import LLM, LLMMessage, LLMRequest
from worldbook.service.llm_replies import (
    JsonReply,
    ask_json,
    ask_repair,
    items_of,
    repair_request,
    validate_item,
)

AddEntries = Callable[[list[EntryDraft]], list[str]]
"""Adds drafts to the target book through the normal path and returns the new entry ids."""

SCHEMA_NAME = "split_plan"
CHARS_PER_TOKEN = 3  # conservative for previews (English runs ~4, CJK ~1.5 per token)
PREVIEW_MIN, PREVIEW_MAX = 60, 1_500
TOKENS_PER_RANGE = 48

SYSTEM_PROMPT = (
    "You split a text into world-book entries. An entry is one topic — a place, faction, "
    "character, object, event or rule — and covers a run of consecutive numbered paragraphs. "
    "Give each entry a short noun-phrase title and aliases (other names the topic goes by in "
    "the text; may be empty). Cover every paragraph exactly once, in order. Do not rewrite "
    "the text: only name the ranges."
)


class RangeReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    title: str
    aliases: list[str] = []
    first: int
    last: int


@dataclass(slots=True)
class SplitOutcome:
    """Entries of a split (dry run unless ``entry_ids`` is set) and what was adjusted."""

    split: splitting.TextSplit
    method: Literal["llm", "headings"]
    warnings: list[str] = field(default_factory=list)
    model: str | None = None
    entry_ids: list[str] | None = None

    def drafts(self, mode: BookMode = BookMode.WORLD) -> list[EntryDraft]:
        """Drafts for the store; a classic book gets the title and aliases as its keys."""
        out = []
        for part in self.split.parts:
            draft = EntryDraft(title=part.title, lore=part.lore, aliases=list(part.aliases))
            if mode is BookMode.CLASSIC:
                draft.keys = [part.title, *part.aliases]
            out.append(draft)
        return out

    def to_json(self) -> dict[str, Any]:
        entries = []
        for i, part in enumerate(self.split.parts):
            entry: dict[str, Any] = {
                "title": part.title,
                "lore": part.lore,
                "aliases": list(part.aliases),
                "separator": part.separator,
            }
            if self.entry_ids is not None:
                entry["id"] = self.entry_ids[i]
            entries.append(entry)
        return {
            "entries": entries,
            "leading": self.split.leading,
            "warnings": list(self.warnings),
            "method": self.method,
            "model": self.model,
            "saved": self.entry_ids is not None,
        }


def preview_lines(text: str, found: Sequence[splitting.Unit], budget_chars: int) -> str:
    """``[n] paragraph`` lines, each cut to an equal share of ``budget_chars``."""
    share = max(PREVIEW_MIN, min(PREVIEW_MAX, budget_chars // max(1, len(found)) - 8))
    lines = []
    for n, unit in enumerate(found, 1):
        body = " ".join(text[unit.start : unit.end].split())
        lines.append(f"[{n}] " + (body if len(body) <= share else body[: share - 1] + "…"))
    return "\n".join(lines)


def _request(llm: LLM, text: str, found: Sequence[splitting.Unit], seed: int | None) -> LLMRequest:
    caps = llm.capabilities
    wanted = 40 + TOKENS_PER_RANGE * len(found)
    output = min(caps.max_output_tokens, caps.context_tokens // 2, wanted)
    budget = max(0, caps.context_tokens - output - 400) * CHARS_PER_TOKEN
    count = len(found)
    entry = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 2, "maxLength": 60},
            "aliases": {
                "type": "array",
                "items": {"type": "string", "maxLength": 60},
                "maxItems": 5,
            },
            "first": {"type": "integer", "minimum": 1, "maximum": count},
            "last": {"type": "integer", "minimum": 1, "maximum": count},
        },
        "required": ["title", "aliases", "first", "last"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"entries": {"type": "array", "items": entry, "minItems": 1}},
        "required": ["entries"],
        "additionalProperties": False,
    }
    paragraphs = preview_lines(text, found, budget)
    return LLMRequest(
        messages=(
            LLMMessage("system", SYSTEM_PROMPT),
            LLMMessage(
                "user",
                f"The text has {count} paragraphs:\n\n{paragraphs}\n\nReply with the entries: "
                f"title, aliases, and the first and last paragraph numbers (1–{count}).",
            ),
        ),
        schema=schema,
        schema_name=SCHEMA_NAME,
        max_output_tokens=output,
        temperature=0.2,
        seed=seed,
    )


def check_ranges(reply: JsonReply, count: int) -> tuple[list[splitting.Group], list[str]]:
    """The usable ranges of a reply (0-based groups) and the problems of the rest."""
    items, problems = items_of(reply, "entries")
    problems = [*reply.problems, *problems]
    groups: list[splitting.Group] = []
    for i, raw in enumerate(items):
        where = f"entries[{i}]"
        item, found = validate_item(RangeReply, raw, where)
        if item is None:
            problems.extend(found)
            continue
        if not 1 <= item.first <= item.last <= count:
            problems.append(
                f"{where}: paragraphs {item.first}–{item.last} are not a range within 1–{count}"
            )
            continue
        if groups and item.first - 1 <= groups[-1].last:
            problems.append(f"{where}: paragraphs {item.first}–{item.last} overlap or go back")
            continue
        title = clean_title(item.title)
        if title is None:
            problems.append(f"{where}.title: {item.title!r} is not a usable title (2–100 chars)")
        groups.append(splitting.Group(item.first - 1, item.last - 1, title, tuple(item.aliases)))
    missed = count - _covered(groups)
    if missed:
        problems.append(f"{missed} of the {count} paragraphs are in no entry")
    return groups, problems


def _covered(groups: Sequence[splitting.Group]) -> int:
    return sum(g.last - g.first + 1 for g in groups)


def _propose(
    llm: LLM, text: str, found: Sequence[splitting.Unit], seed: int | None
) -> tuple[list[splitting.Group], list[str]]:
    """The model's ranges after at most one repair round, and the warnings to report."""
    request = _request(llm, text, found, seed)
    first = ask_json(llm, request)
    groups, problems = check_ranges(first, len(found))
    if not problems:
        return groups, []
    again = repair_request(
        request,
        first,
        problems,
        "Reply again with the complete corrected JSON: every paragraph in exactly one entry, "
        "ranges in order and not overlapping.",
    )
    second, failed = ask_repair(llm, again)
    warnings = [failed] if failed else []
    if second is not None:
        better, left = check_ranges(second, len(found))
        if (_covered(better), -len(left)) >= (_covered(groups), -len(problems)):
            groups, problems = better, left
    warnings.extend(f"model's plan: {p}" for p in problems)
    if problems:
        warnings.append("what the model's plan left out was cut by headings and paragraphs")
    return groups, warnings


def split_into_entries(
    text: str,
    *,
    llm: LLM | None,
    add_entries: AddEntries | None = None,
    mode: BookMode = BookMode.WORLD,
    seed: int | None = None,
) -> SplitOutcome:
    """Split ``text`` (≤ 40,000 characters) into entries; save them when ``add_entries`` is
    given (nothing is saved when any check fails).

    Raises:
        LimitExceeded: the text is over the "text to split into entries" limit.
        InvalidInput: the text holds less than one entry.
    """
    splitting.check_splittable(text)
    if llm is None:
        outcome = SplitOutcome(splitting.split_text(text), "headings")
        outcome.warnings.append(
            "no language model is configured (WORLDBOOK_LLM_URL): cut by headings and paragraphs"
        )
    else:
        outcome = _split_with_model(text, llm, seed)
    outcome.warnings.extend(outcome.split.notes)
    if add_entries is not None:
        outcome.entry_ids = list(add_entries(outcome.drafts(mode)))
    return outcome


def _split_with_model(text: str, llm: LLM, seed: int | None) -> SplitOutcome:
    found = splitting.units(text)
    try:
        groups, warnings = _propose(llm, text, found, seed)
    except LLM_FAILURES as exc:
        assert isinstance(exc, WorldbookError)
        outcome = SplitOutcome(splitting.split_text(text), "headings", model=llm.model)
        outcome.warnings.append(
            f"the language model failed ({exc.message}); cut by headings and paragraphs instead"
        )
        return outcome
    return SplitOutcome(splitting.split_text(text, groups), "llm", warnings, llm.model)
