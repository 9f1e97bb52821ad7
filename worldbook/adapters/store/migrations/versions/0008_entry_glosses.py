"""Glosses (ADR 0023): an entry's name and gist written by the app's model in a reader
language, one row per (entry, language), kept apart from the author's entries so they are never
exported or rendered as lore. A row is current only while its ``content_hash`` is the entry's.

Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    op.create_table(
        "entry_glosses",
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("language", sa.String(length=8), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("gist", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["entry_id"], ["entries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entry_id", "language"),
    )
    op.create_index("ix_entry_glosses_book_id", "entry_glosses", ["book_id"])


def downgrade() -> None:
    op.drop_index("ix_entry_glosses_book_id", table_name="entry_glosses")
    op.drop_table("entry_glosses")
