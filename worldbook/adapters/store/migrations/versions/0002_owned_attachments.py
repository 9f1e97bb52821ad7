"""Attachments belong to the user who made them; entries remember when their status changed.

- ``attachments``: a character, story or novel id is the calling app's id, shared by all its
  users. Attachments are now scoped by ``attached_by`` (unique per user, target and book), so a
  user's turns only ever see attachments that user made (or that the app names explicitly,
  see docs/decisions.md "Cast ids are scoped per user"), and nobody can attach to or detach
  from someone else's character.
- ``entries.index_status_at``: when the index status last changed, so the sweep can put back
  entries stuck in ``indexing`` after a worker died.

Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    with op.batch_alter_table("attachments") as batch:
        batch.drop_constraint("uq_attachments_target", type_="unique")
        batch.drop_index("ix_attachments_target")
        batch.create_unique_constraint(
            "uq_attachments_owner_target", ["attached_by", "target_kind", "target_id", "book_id"]
        )
        batch.create_index(
            "ix_attachments_owner_target", ["attached_by", "target_kind", "target_id", "position"]
        )
    with op.batch_alter_table("entries") as batch:
        batch.add_column(sa.Column("index_status_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("index_status_at")
    with op.batch_alter_table("attachments") as batch:
        batch.drop_index("ix_attachments_owner_target")
        batch.drop_constraint("uq_attachments_owner_target", type_="unique")
        batch.create_index("ix_attachments_target", ["target_kind", "target_id", "position"])
        batch.create_unique_constraint(
            "uq_attachments_target", ["target_kind", "target_id", "book_id"]
        )
