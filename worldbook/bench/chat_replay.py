"""A labelled turn replayed as a chat (ADR 0021): its earlier user messages are real turns of
the chat first, so the request log holds what they selected when the labelled turn runs."""

from __future__ import annotations

from collections.abc import Sequence

from worldbook.core.types import Message, ModelProfile, Selection
from worldbook.service.cast import BookSource
from worldbook.service.services import Services
from worldbook.service.turns import select_turn


def chat_turn(
    services: Services,
    user_id: str,
    source: BookSource,
    messages: Sequence[Message],
    profile: ModelProfile,
    chat_id: str | None,
) -> Selection:
    """The selection of the whole ``messages``; with a ``chat_id`` each earlier user message
    was a turn of that chat first (the messages up to it)."""
    ends = [i + 1 for i, m in enumerate(messages[:-1]) if m.role == "user"] if chat_id else []
    for end in (*ends, len(messages)):
        result = select_turn(
            services,
            user_id=user_id,
            source=source,
            messages=messages[:end],
            profile=profile,
            chat_id=chat_id,
        )
    return result.selection
