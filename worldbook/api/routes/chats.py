"""Chats: the request log of a chat's last turns (what went in and why; DESIGN §3)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.schemas import ChatLogOut, LogTurnOut
from worldbook.service import request_log

router = APIRouter(tags=["chats"])

ChatId = Annotated[str, Path(min_length=1, max_length=255, description="The app's chat id.")]


@router.get("/chats/{chat_id}/log")
def chat_log(
    chat_id: ChatId,
    caller: CallerDep,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> ChatLogOut:
    """The caller's last turns in this chat, newest first: every entry that went in (with its
    via, tokens and reason), the world-index lines, the classic entries activated but left out,
    the budgets. A chat belongs to the user whose turns it holds; books the caller may not read
    (now) are left out of every record."""
    turns = request_log.chat_log(services, caller.user_id, chat_id, limit=limit)
    return ChatLogOut(chat_id=chat_id, turns=[LogTurnOut.model_validate(t) for t in turns])
