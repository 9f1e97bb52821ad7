"""What a chat's previous turns selected, as referents of this turn (ADR 0021).

A real turn that names a chat keeps a request-log row (``service/request_log.py``); the entries
it put in full by name or by meaning are what the model answered from, so the next turn's
follow-up ("and her sister?") may be about them even when no message names them. They join the
literal referents of :mod:`worldbook.core.referents` with the same fade (a previous turn is two
messages back). Canon, whole books, list-order fallbacks and index lines are left out: they are
there every turn, or were only listed.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from worldbook.core.referents import earlier_selections
from worldbook.core.types import Via
from worldbook.errors import StorageUnavailable
from worldbook.ports import ChatStore

logger = logging.getLogger(__name__)

Key = tuple[str, str]  # (book id, entry id)
CHOSEN = frozenset((Via.LITERAL.value, Via.SEMANTIC.value))
"""How an entry must have come in to count: named or found by meaning for that turn."""


def previous_referents(
    chats: ChatStore,
    user_id: str,
    chat_id: str | None,
    book_ids: Collection[str],
    turns: int,
    fade: float,
) -> dict[Key, float]:
    """The entries of ``book_ids`` the chat's last ``turns`` logged turns put in full, each
    weighted by how many turns back (nothing without a chat id, or when the log is out of
    reach: the turn goes on without them)."""
    if chat_id is None or turns <= 0 or not book_ids:
        return {}
    try:
        rows = chats.chat_log(user_id, chat_id, limit=turns)
    except StorageUnavailable as exc:
        logger.warning("request log unavailable for referents: %s", exc)
        return {}
    chosen = [
        [
            (str(item["book_id"]), str(item["entry_id"]))
            for item in row.record.get("injected", ())
            if item.get("via") in CHOSEN and item.get("book_id") in book_ids
        ]
        for row in rows
    ]
    return earlier_selections(chosen, fade)
