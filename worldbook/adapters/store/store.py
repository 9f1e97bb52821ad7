"""``SqlStore``: the SQLModel/SQLAlchemy implementation of the ``Store`` port."""

from __future__ import annotations

from worldbook.adapters.store.attachments import AttachmentsMixin
from worldbook.adapters.store.books import BooksMixin
from worldbook.adapters.store.chats import ChatsMixin
from worldbook.adapters.store.connections import ConnectionsMixin
from worldbook.adapters.store.entries import EntriesMixin
from worldbook.adapters.store.glosses import GlossesMixin
from worldbook.adapters.store.keys import KeysMixin
from worldbook.adapters.store.migrate import upgrade_database
from worldbook.adapters.store.usage import UsageMixin
from worldbook.adapters.store.vectors import VectorsMixin
from worldbook.adapters.store.writes import WritesMixin


class SqlStore(
    KeysMixin,
    BooksMixin,
    AttachmentsMixin,
    WritesMixin,  # the living world (before EntriesMixin, which it builds on)
    EntriesMixin,
    VectorsMixin,
    UsageMixin,
    ChatsMixin,
    ConnectionsMixin,  # proxy connections (ADR 0017)
    GlossesMixin,  # generated names and gists in reader languages (ADR 0023)
):
    """The store on SQLite (default) or PostgreSQL, chosen by the SQLAlchemy URL.

    Every method returns plain frozen records and runs as one transaction; a rejected write
    changes nothing. The schema must be migrated first (:func:`open_store` does it).
    """


def open_store(url: str) -> SqlStore:
    """Migrate the database at ``url`` to the newest schema and return a store on it."""
    store = SqlStore(url)
    try:
        upgrade_database(url, engine=store._engine)
    except BaseException:
        store.close()
        raise
    return store
