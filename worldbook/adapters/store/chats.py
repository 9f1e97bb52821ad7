"""Chats: classic chat state per book and the request log (DESIGN §3).

A chat is the app's id, scoped by the acting user whose turns it holds (as attachments are
scoped by who made them): another user naming the same chat id reads and writes their own
chat. A turn reads the state before it runs and writes the new state and its log row in ONE
transaction afterwards; concurrent turns of one chat are last-writer-wins per (chat, book) row
(docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from worldbook.adapters.store import tables as t
from worldbook.adapters.store.base import StoreBase, record_of
from worldbook.adapters.store.engine import read_tx, write_tx
from worldbook.core.drafts import JSONDict
from worldbook.core.records import ChatLogRecord, now
from worldbook.core.store_rules import check_chat, check_keep
from worldbook.errors import InvalidInput


class ChatsMixin(StoreBase):
    def chat_states(
        self, owner_id: str, chat_id: str, book_ids: Sequence[str]
    ) -> dict[str, JSONDict]:
        """The stored state of each of these books in the chat (books without one left out)."""
        check_chat(owner_id, chat_id)
        wanted = list(dict.fromkeys(book_ids))
        if not wanted:
            return {}
        c = t.chat_state.c
        stmt = sa.select(c.book_id, c.state).where(
            c.owner_id == owner_id, c.chat_id == chat_id, c.book_id.in_(wanted)
        )
        with read_tx(self._engine) as conn:
            return {row[0]: dict(row[1]) for row in conn.execute(stmt)}

    def record_chat_turn(
        self,
        owner_id: str,
        chat_id: str,
        *,
        states: Mapping[str, JSONDict | None],
        log: JSONDict | None,
        keep_log: int = 50,
    ) -> None:
        """Write a real turn's chat state (book id → state; ``None`` or ``{}`` deletes the row)
        and its request-log row, keeping the newest ``keep_log`` rows, in one transaction."""
        check_chat(owner_id, chat_id)
        check_keep(keep_log)
        stamp = now()
        upserts = [
            {
                "owner_id": owner_id,
                "chat_id": chat_id,
                "book_id": b,
                "state": s,
                "updated_at": stamp,
            }
            for b, s in sorted(states.items())
            if s
        ]
        deletes = sorted(b for b, s in states.items() if not s)
        c = t.chat_state.c
        with write_tx(self._engine) as conn:
            if deletes:
                conn.execute(
                    sa.delete(t.chat_state).where(
                        c.owner_id == owner_id, c.chat_id == chat_id, c.book_id.in_(deletes)
                    )
                )
            if upserts:
                insert = (pg_insert if self._pg else sqlite_insert)(t.chat_state)
                conn.execute(
                    insert.on_conflict_do_update(
                        index_elements=[c.owner_id, c.chat_id, c.book_id],
                        set_={"state": insert.excluded.state, "updated_at": stamp},
                    ),
                    upserts,
                )
            if log is not None and keep_log:
                self._append_log(conn, owner_id, chat_id, log, keep_log)

    def _append_log(
        self, conn: sa.Connection, owner_id: str, chat_id: str, log: JSONDict, keep: int
    ) -> None:
        c = t.chat_log.c
        conn.execute(
            sa.insert(t.chat_log).values(
                owner_id=owner_id, chat_id=chat_id, created_at=now(), record=log
            )
        )
        # The id of the oldest row to keep; everything older of this chat goes.
        oldest = conn.execute(
            sa.select(c.id)
            .where(c.owner_id == owner_id, c.chat_id == chat_id)
            .order_by(c.id.desc())
            .offset(keep - 1)
            .limit(1)
        ).scalar()
        if oldest is not None:
            conn.execute(
                sa.delete(t.chat_log).where(
                    c.owner_id == owner_id, c.chat_id == chat_id, c.id < oldest
                )
            )

    def chat_log(self, owner_id: str, chat_id: str, *, limit: int = 50) -> list[ChatLogRecord]:
        """The chat's logged turns, newest first."""
        check_chat(owner_id, chat_id)
        if not 1 <= limit <= 500:
            raise InvalidInput("limit must be 1–500.", field="limit")
        c = t.chat_log.c
        stmt = (
            sa.select(t.chat_log)
            .where(c.owner_id == owner_id, c.chat_id == chat_id)
            .order_by(c.id.desc())
            .limit(limit)
        )
        with read_tx(self._engine) as conn:
            rows = conn.execute(stmt).mappings().all()
        return [_log_record(r) for r in rows]


def _log_record(row: Mapping[Any, Any]) -> ChatLogRecord:
    return record_of(ChatLogRecord, row, record=dict(row["record"]))
