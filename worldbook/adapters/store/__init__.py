"""The SQL store adapter: SQLModel tables, Alembic migrations and :class:`SqlStore`."""

from worldbook.adapters.store.migrate import upgrade_database
from worldbook.adapters.store.store import SqlStore, open_store
from worldbook.core.embed_text import entry_content_hash
from worldbook.core.ordering import GAP, Target
from worldbook.core.records import (
    ApiKeyRecord,
    AttachmentRecord,
    BookRecord,
    EntryRecord,
    EntryToIndex,
    EntryUsageRecord,
    ImportJobRecord,
    TargetKind,
)

__all__ = [
    "GAP",
    "ApiKeyRecord",
    "AttachmentRecord",
    "BookRecord",
    "EntryRecord",
    "EntryToIndex",
    "EntryUsageRecord",
    "ImportJobRecord",
    "SqlStore",
    "Target",
    "TargetKind",
    "entry_content_hash",
    "open_store",
    "upgrade_database",
]
