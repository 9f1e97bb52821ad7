"""Classic lorebooks in turns: chat state, the request log, priority "same as order".

- ``chat_state``: a chat's classic state per book (sticky, cooldown, match memory), one JSON
  row per (acting user, chat id, book id), written in the turn's own transaction.
- ``chat_log``: the request log, one row per real turn of a chat (the newest 50 are kept).
- ``entries.priority`` becomes nullable: NULL means "the entry's order" (classic.md §5 item 5).
  Existing 0s (the old default; priority had no effect on any selection before this revision)
  become NULL.
- Book settings: the importers' ``recursive`` is renamed ``recursive_scanning`` (the CCv3 and
  engine name); both names are still read.

Create Date: 2026-12-05
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"

_BOOKS = sa.table("books", sa.column("id", sa.String()), sa.column("settings", sa.JSON()))


def upgrade() -> None:
    op.create_table(
        "chat_state",
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("owner_id", "chat_id", "book_id"),
    )
    op.create_index("ix_chat_state_book_id", "chat_state", ["book_id"])
    op.create_table(
        "chat_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_chat_log_chat", "chat_log", ["owner_id", "chat_id", "id"])
    with op.batch_alter_table("entries") as batch:
        batch.alter_column("priority", existing_type=sa.Integer(), nullable=True)
    op.execute("UPDATE entries SET priority = NULL WHERE priority = 0")
    _rename_recursive()


def _rename_recursive() -> None:
    conn = op.get_bind()
    for book_id, settings in conn.execute(sa.select(_BOOKS.c.id, _BOOKS.c.settings)).all():
        if not isinstance(settings, dict) or "recursive" not in settings:
            continue
        renamed: dict[str, Any] = dict(settings)
        value = renamed.pop("recursive")
        renamed.setdefault("recursive_scanning", value)
        conn.execute(sa.update(_BOOKS).where(_BOOKS.c.id == book_id).values(settings=renamed))


def downgrade() -> None:
    op.execute("UPDATE entries SET priority = 0 WHERE priority IS NULL")
    with op.batch_alter_table("entries") as batch:
        batch.alter_column("priority", existing_type=sa.Integer(), nullable=False)
    op.drop_index("ix_chat_log_chat", table_name="chat_log")
    op.drop_table("chat_log")
    op.drop_index("ix_chat_state_book_id", table_name="chat_state")
    op.drop_table("chat_state")
