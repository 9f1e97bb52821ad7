"""Chats of the in-memory store: classic chat state and the request log (as
``worldbook.adapters.store.chats``)."""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from worldbook.core.records import ChatLogRecord, now
from worldbook.core.store_rules import check_chat, check_keep
from worldbook.errors import InvalidInput

JSONDict = dict[str, Any]


class ChatTable:
    """Chat state per (owner, chat, book) and the newest log rows per (owner, chat)."""

    _lock: threading.RLock

    def __init__(self) -> None:
        super().__init__()
        self._chat_states: dict[tuple[str, str, str], JSONDict] = {}
        self._chat_logs: dict[tuple[str, str], list[ChatLogRecord]] = {}
        self._log_ids = itertools.count(1)

    def chat_states(
        self, owner_id: str, chat_id: str, book_ids: Sequence[str]
    ) -> dict[str, JSONDict]:
        check_chat(owner_id, chat_id)
        with self._lock:
            return {
                b: copy.deepcopy(self._chat_states[(owner_id, chat_id, b)])
                for b in dict.fromkeys(book_ids)
                if (owner_id, chat_id, b) in self._chat_states
            }

    def record_chat_turn(
        self,
        owner_id: str,
        chat_id: str,
        *,
        states: Mapping[str, JSONDict | None],
        log: JSONDict | None,
        keep_log: int = 50,
    ) -> None:
        check_chat(owner_id, chat_id)
        check_keep(keep_log)
        with self._lock:
            for book_id, state in states.items():
                key = (owner_id, chat_id, book_id)
                if state:
                    self._chat_states[key] = copy.deepcopy(dict(state))
                else:
                    self._chat_states.pop(key, None)
            if log is not None and keep_log:
                rows = self._chat_logs.setdefault((owner_id, chat_id), [])
                rows.append(
                    ChatLogRecord(next(self._log_ids), owner_id, chat_id, now(), copy.deepcopy(log))
                )
                del rows[:-keep_log]

    def chat_log(self, owner_id: str, chat_id: str, *, limit: int = 50) -> list[ChatLogRecord]:
        check_chat(owner_id, chat_id)
        if not 1 <= limit <= 500:
            raise InvalidInput("limit must be 1–500.", field="limit")
        with self._lock:
            rows = list(self._chat_logs.get((owner_id, chat_id), []))
        return [copy.deepcopy(r) for r in reversed(rows)][:limit]

    def _forget_chat_states(self, book_id: str) -> None:
        """Drop every chat's state of a purged book (the SQL store's purge does the same)."""
        for key in [k for k in self._chat_states if k[2] == book_id]:
            del self._chat_states[key]
