"""The living world (ADR 0006): the write log, entries' living state, entry trash.

- ``lore_writes``: one row per living-world write, unique per book and call (chat, message,
  swipe, call id — hashed into ``call_key``); an append's text is its stored segment.
- ``living_entries``: for an entry the AI wrote to, its base text and hashes of what the last
  living write left (to tell a person's edit from the AI's own).
- ``entry_trash``: entries taken out of their book by undoing their create, restorable.

Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    _lore_writes()
    _living_entries()
    _entry_trash()


def _lore_writes() -> None:
    op.create_table(
        "lore_writes",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("message_id", sa.String(length=255), nullable=False),
        sa.Column("swipe", sa.Integer(), nullable=True),
        sa.Column("call_id", sa.String(length=255), nullable=False),
        sa.Column("call_key", sa.String(length=64), nullable=False),
        sa.Column("arguments_sha", sa.String(length=64), nullable=False),
        sa.Column("tool", sa.String(length=16), nullable=False),
        sa.Column("effect", sa.String(length=16), nullable=False),
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("entry_title", sa.String(length=100), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("undone_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("undo_reason", sa.String(length=16), nullable=True),
        sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("seq"),
        sa.UniqueConstraint("id"),
        sa.UniqueConstraint("book_id", "call_key", name="uq_lore_writes_call"),
    )
    op.create_index("ix_lore_writes_book_created", "lore_writes", ["book_id", "created_at"])
    op.create_index("ix_lore_writes_message", "lore_writes", ["chat_id", "message_id"])
    op.create_index("ix_lore_writes_entry", "lore_writes", ["entry_id"])


def _living_entries() -> None:
    op.create_table(
        "living_entries",
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("base", sa.Text(), nullable=False),
        sa.Column("lore_sha", sa.String(length=64), nullable=False),
        sa.Column("fields_sha", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["entry_id"], ["entries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entry_id"),
    )
    op.create_index("ix_living_entries_book_id", "living_entries", ["book_id"])


def _entry_trash() -> None:
    op.create_table(
        "entry_trash",
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("draft", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("trashed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("write_id", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entry_id"),
    )
    op.create_index("ix_entry_trash_book_id", "entry_trash", ["book_id"])


def downgrade() -> None:
    op.drop_index("ix_entry_trash_book_id", table_name="entry_trash")
    op.drop_table("entry_trash")
    op.drop_index("ix_living_entries_book_id", table_name="living_entries")
    op.drop_table("living_entries")
    op.drop_index("ix_lore_writes_entry", table_name="lore_writes")
    op.drop_index("ix_lore_writes_message", table_name="lore_writes")
    op.drop_index("ix_lore_writes_book_created", table_name="lore_writes")
    op.drop_table("lore_writes")
