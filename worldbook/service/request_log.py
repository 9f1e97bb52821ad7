"""The request log: what went into a turn and why (DESIGN §3).

A real turn that names a chat keeps one record (the newest ``chat_log_turns`` per chat) in the
same transaction as its chat state. A record lists the turn's books, every entry that reached
the model (canon, whole books, the lorebook slot, per-turn lore) with its via, tokens and reason,
the world-index lines, the classic entries that were activated but left out (over budget,
probability, group, cooldown, …), canon over budget, the budgets and the notes. It holds no chat
text and no lore text (the entries do), so it stays small: ~50 turns × a few KB per chat.

Reading (``GET /v1/chats/{chat_id}/log``, ``worldbook select --explain``): a chat belongs to
the acting user whose turns wrote it; each record is shown with only the books the reader may
read now — a book made private or trashed since, or someone else's private book, is left out
with everything of it (and the notes, which may name it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from worldbook.core.classic import ClassicResult
from worldbook.core.classic import TraceRecord as ClassicRecord
from worldbook.core.drafts import JSONDict
from worldbook.core.records import BookRecord, ChatLogRecord
from worldbook.core.types import Decision, Selection
from worldbook.errors import WorldbookError
from worldbook.service.access import can_view
from worldbook.service.needs import ChatLogReads, HasBooks

_ENTRY_LISTS = ("injected", "index", "left_out")


def log_record(
    selection: Selection,
    books: Sequence[tuple[BookRecord, str | None]],
    result: ClassicResult | None,
    *,
    messages: int,
    chat_length: int | None = None,
) -> JSONDict:
    """One turn's record (plain JSON)."""
    reasons = {(r.book_id, r.entry_id): r.reason for r in selection.trace}

    def item(ref: Any, **extra: Any) -> JSONDict:
        key = (ref.book_id, ref.entry_id)
        return {
            "entry_id": ref.entry_id,
            "book_id": ref.book_id,
            "title": ref.title,
            "character": ref.character,
            **extra,
            "reason": reasons.get(key, ""),
        }

    injected = [item(e.ref, via="canon", tokens=e.tokens, role=e.role) for e in selection.canon]
    injected += [
        item(e.ref, via=e.via.value, tokens=e.tokens, role=e.role) for e in selection.injected
    ]
    return {
        "messages": messages,
        "chat_length": chat_length if chat_length is not None else messages,
        "books": _books(books),
        "budgets": {
            "canon": {"budget": selection.canon_budget, "tokens": selection.canon_tokens},
            "per_turn": {"budget": selection.per_turn_budget, "tokens": selection.per_turn_tokens},
            "lorebook": {"budget": selection.lorebook_budget, "tokens": selection.lorebook_tokens},
        },
        "injected": injected,
        "index": [item(line.ref, tokens=line.tokens) for line in selection.index],
        "left_out": _left_out(selection, result),
        "notes": list(selection.notes),
    }


def _books(books: Sequence[tuple[BookRecord, str | None]]) -> list[JSONDict]:
    seen: dict[str, JSONDict] = {}
    for book, character in books:
        about = {"book_id": book.id, "title": book.title, "mode": book.mode.value}
        seen.setdefault(book.id, {**about, "character": character})
    return list(seen.values())


def _left_out(selection: Selection, result: ClassicResult | None) -> list[JSONDict]:
    """Canon over budget, and classic entries activated (or close to it) but left out."""
    out = [
        {"entry_id": r.entry_id, "book_id": r.book_id, "title": r.title, "reason": r.reason}
        for r in selection.trace
        if r.decision is Decision.LEFT_OUT and r.reason.startswith("canon over budget")
    ]
    for r in left_out_records(result):
        reason = f"{r.fate}: {r.reason}"
        out.append(
            {"entry_id": r.entry_id, "book_id": r.book_id, "title": r.title, "reason": reason}
        )
    return out


def visible_record(record: JSONDict, readable: Callable[[str], bool]) -> JSONDict:
    """``record`` without what the reader may not read (see the module doc)."""
    books = [b for b in record.get("books", []) if readable(b.get("book_id", ""))]
    hidden = len(books) < len(record.get("books", []))
    out = dict(record, books=books)
    for name in _ENTRY_LISTS:
        items = record.get(name, [])
        kept = [i for i in items if readable(i.get("book_id", ""))]
        hidden = hidden or len(kept) < len(items)
        out[name] = kept
    if hidden:
        out["notes"] = []
    return out


def reader(services: HasBooks, user_id: str) -> Callable[[str], bool]:
    """Whether ``user_id`` may read a book now (memoised for one request)."""
    known: dict[str, bool] = {}

    def readable(book_id: str) -> bool:
        if book_id not in known:
            try:
                book = services.books.get_book(book_id, include_trashed=True)
            except WorldbookError:
                known[book_id] = False
            else:
                known[book_id] = can_view(book, user_id)
        return known[book_id]

    return readable


def log_view(row: ChatLogRecord, readable: Callable[[str], bool]) -> JSONDict:
    return {"id": row.id, "at": row.created_at.isoformat(), **visible_record(row.record, readable)}


def chat_log(
    services: ChatLogReads, user_id: str, chat_id: str, *, limit: int = 50
) -> list[JSONDict]:
    """The caller's chat log, newest first, with only what they may read."""
    readable = reader(services, user_id)
    return [
        log_view(row, readable) for row in services.chats.chat_log(user_id, chat_id, limit=limit)
    ]


def explain_lines(record: JSONDict) -> list[str]:
    """The record as text (``worldbook select --explain``)."""
    budgets = record.get("budgets", {})
    lines = [
        "books: " + ", ".join(f"{b['title']} ({b['mode']})" for b in record.get("books", [])),
        "budgets: "
        + ", ".join(f"{k} {v['tokens']}/{v['budget']}" for k, v in budgets.items() if v["budget"]),
        "went in:",
    ]
    for i in record.get("injected", []):
        lines.append(f"  [{i['via']}] {i['title']} — {i['tokens']} tokens: {i['reason']}")
    if record.get("index"):
        lines.append("world index:")
        lines += [f"  {i['title']}: {i['reason']}" for i in record["index"]]
    if record.get("left_out"):
        lines.append("left out:")
        lines += [f"  {i['title']}: {i['reason']}" for i in record["left_out"]]
    return lines


def left_out_records(result: ClassicResult | None) -> list[ClassicRecord]:
    """Classic entries that were activated or close to it but did not reach the model (the
    request log lists them; "no key matched", disabled and "in the prompt already" are not)."""
    if result is None:
        return []
    quiet = ("injected", "no_match", "disabled", "elsewhere")
    return [r for r in result.trace if r.fate not in quiet]
