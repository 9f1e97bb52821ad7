"""Proxy connections (ADR 0017): an app's token (stored hashed) bound to a user's books, an
upstream model (its key sealed) and a model profile.

Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "connections",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("secret_sha256", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("upstream_key", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("secret_sha256"),
    )
    op.create_index("ix_connections_owner_id", "connections", ["owner_id"])
    op.create_index("ix_connections_prefix", "connections", ["prefix"])


def downgrade() -> None:
    op.drop_index("ix_connections_prefix", table_name="connections")
    op.drop_index("ix_connections_owner_id", table_name="connections")
    op.drop_table("connections")
