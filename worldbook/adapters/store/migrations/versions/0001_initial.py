"""Initial schema: users, keys, books, entries, attachments, vectors, usage, tokens, imports.

Written to run on SQLite and PostgreSQL alike (plain CREATE TABLE / CREATE INDEX; later revisions
that ALTER tables use ``op.batch_alter_table`` so SQLite gets its copy-and-move).

Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None


def upgrade() -> None:
    _users_and_keys()
    _books_and_attachments()
    _entries()
    _jobs_usage_and_vectors()


def _users_and_keys() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("secret_sha256", sa.String(length=64), nullable=False),
        sa.Column("prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("secret_sha256"),
    )
    op.create_index("ix_api_keys_prefix", "api_keys", ["prefix"])

    op.create_table(
        "token_counts",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("tokenizer_id", sa.String(length=200), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("content_hash", "tokenizer_id"),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def _books_and_attachments() -> None:
    op.create_table(
        "books",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("title", sa.String(length=120), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("visibility", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("extensions", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("index_version", sa.Integer(), nullable=False),
        sa.Column("entry_count", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_books_owner_deleted", "books", ["owner_id", "deleted_at"])
    op.create_index("ix_books_visibility", "books", ["visibility"])

    op.create_table(
        "attachments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("target_kind", sa.String(length=16), nullable=False),
        sa.Column("target_id", sa.String(length=255), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("attached_by", sa.String(length=255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("target_kind", "target_id", "book_id", name="uq_attachments_target"),
    )
    op.create_index("ix_attachments_book_id", "attachments", ["book_id"])
    op.create_index(
        "ix_attachments_target", "attachments", ["target_kind", "target_id", "position"]
    )

    op.create_table(
        "book_tags",
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("tag", sa.String(length=50), nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("book_id", "tag"),
    )
    op.create_index("ix_book_tags_tag", "book_tags", ["tag"])

    op.create_table(
        "book_usage",
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("book_id"),
    )


def _entries() -> None:
    op.create_table(
        "entries",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("title", sa.String(length=100), nullable=False),
        sa.Column("lore", sa.Text(), nullable=False),
        sa.Column("aliases", sa.JSON(), nullable=False),
        sa.Column("canon", sa.Boolean(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("keys", sa.JSON(), nullable=False),
        sa.Column("secondary_keys", sa.JSON(), nullable=False),
        sa.Column("selective", sa.Boolean(), nullable=False),
        sa.Column("selective_logic", sa.Integer(), nullable=False),
        sa.Column("constant", sa.Boolean(), nullable=False),
        sa.Column("order", sa.Integer(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("whole_words", sa.Boolean(), nullable=True),
        sa.Column("case_sensitive", sa.Boolean(), nullable=True),
        sa.Column("probability", sa.Integer(), nullable=False),
        sa.Column("scan_depth", sa.Integer(), nullable=True),
        sa.Column("decorators", sa.JSON(), nullable=False),
        sa.Column("extensions", sa.JSON(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("index_status", sa.String(length=16), nullable=False),
        sa.Column("index_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_entries_book_position", "entries", ["book_id", "position"])
    op.create_index("ix_entries_index_status", "entries", ["index_status"])


def _jobs_usage_and_vectors() -> None:
    op.create_table(
        "import_jobs",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("book_id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=False),
        sa.Column("source_sha256", sa.String(length=64), nullable=False),
        sa.Column("total_entries", sa.Integer(), nullable=False),
        sa.Column("done_entries", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["book_id"], ["books.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_import_jobs_source", "import_jobs", ["owner_id", "source_sha256"])

    op.create_table(
        "entry_usage",
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("canon", sa.Integer(), nullable=False),
        sa.Column("whole_book", sa.Integer(), nullable=False),
        sa.Column("full", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["entry_id"], ["entries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entry_id"),
    )
    op.create_table(
        "entry_vectors",
        sa.Column("entry_id", sa.String(length=32), nullable=False),
        sa.Column("model_id", sa.String(length=200), nullable=False),
        sa.Column("chunk", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["entry_id"], ["entries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("entry_id", "model_id", "chunk"),
    )
    op.create_index("ix_entry_vectors_model", "entry_vectors", ["model_id", "entry_id"])


def downgrade() -> None:
    op.drop_index("ix_entry_vectors_model", table_name="entry_vectors")

    op.drop_table("entry_vectors")
    op.drop_table("entry_usage")
    op.drop_index("ix_import_jobs_source", table_name="import_jobs")

    op.drop_table("import_jobs")
    op.drop_index("ix_entries_index_status", table_name="entries")
    op.drop_index("ix_entries_book_position", table_name="entries")

    op.drop_table("entries")
    op.drop_table("book_usage")
    op.drop_index("ix_book_tags_tag", table_name="book_tags")

    op.drop_table("book_tags")
    op.drop_index("ix_attachments_target", table_name="attachments")
    op.drop_index("ix_attachments_book_id", table_name="attachments")

    op.drop_table("attachments")
    op.drop_index("ix_books_visibility", table_name="books")
    op.drop_index("ix_books_owner_deleted", table_name="books")

    op.drop_table("books")
    op.drop_table("users")
    op.drop_table("token_counts")
    op.drop_index("ix_api_keys_prefix", table_name="api_keys")

    op.drop_table("api_keys")
