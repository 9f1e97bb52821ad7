"""Served turns per book per UTC day, for the usage chart of the lore inspector (ADR 0015).

``book_usage_days`` has no foreign key to ``books`` (see ``tables.BookUsageDayRow``): rows are
written only for books whose ``book_usage`` row exists, and ``purge_book`` deletes them.

Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "book_usage_days",
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("book_id", "day"),
    )


def downgrade() -> None:
    op.drop_table("book_usage_days")
