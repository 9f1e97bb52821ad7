"""The JSON shape of a selection, shared by ``worldbook select --json`` and the HTTP API
(issue 3 item 5). Keys listed there are always present; the extra ones are additive."""

from __future__ import annotations

from typing import Any

from worldbook.core.rendering import RenderedPrompt
from worldbook.core.types import EntryRef, Selection

JSONDict = dict[str, Any]


def entry_json(ref: EntryRef) -> JSONDict:
    """``E``: the entry's id, book, title, full lore tokens, and the character it came with."""
    return {
        "entry_id": ref.entry_id,
        "book_id": ref.book_id,
        "title": ref.title,
        "tokens": ref.tokens,
        "character": ref.character,
    }


def selection_to_json(selection: Selection, rendered: RenderedPrompt) -> JSONDict:
    """The selection and its rendering as one JSON-ready dict (OpenAI message conventions).

    ``tokens`` in ``E`` is the entry's full lore; ``cost`` is what the budget was charged
    (the cut text for a truncated entry, the line for an index line).
    """
    return {
        "canon": {
            "budget": selection.canon_budget,
            "tokens": selection.canon_tokens,
            "entries": [entry_json(e.ref) for e in selection.canon],
            "over_budget": [entry_json(ref) for ref in selection.canon_over_budget],
        },
        "whole_books": list(selection.whole_books),
        "per_turn_budget": selection.per_turn_budget,
        "per_turn_tokens": selection.per_turn_tokens,
        "injected": [
            {**entry_json(e.ref), "via": e.via.value, "truncated": e.truncated, "cost": e.tokens}
            for e in selection.injected
        ],
        "index": [
            {**entry_json(ln.ref), "line": ln.line, "linked": ln.linked, "cost": ln.tokens}
            for ln in selection.index
        ],
        "fallback_books": list(selection.fallback_books),
        "notes": list(selection.notes),
        "messages": rendered.openai_messages(),
        "tools": rendered.openai_tools(),
        "anthropic": rendered.anthropic(),
        "trace": [
            {
                "entry_id": t.entry_id,
                "book_id": t.book_id,
                "title": t.title,
                "decision": t.decision.value,
                "reason": t.reason,
            }
            for t in selection.trace
        ],
    }
