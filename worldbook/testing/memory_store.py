"""An in-memory :class:`~worldbook.ports.Store`: the same rules, errors and records as the SQL
store, for unit tests of the use cases (turns, library, importing) without a database.

Every write validates first (``worldbook.core.limits``) and changes state only once nothing can
fail, so a refused write changes nothing — as a transaction would. One re-entrant lock serialises
all calls. The store tests run against it too (``tests/integration/test_store.py``), which keeps
it honest.
"""

from __future__ import annotations

from worldbook.testing.memory_chats import ChatTable
from worldbook.testing.memory_connections import ConnectionTable
from worldbook.testing.memory_glosses import GlossTable
from worldbook.testing.memory_imports import ImportTable
from worldbook.testing.memory_usage import UsageTable
from worldbook.testing.memory_vectors import VectorTable
from worldbook.testing.memory_writes import WriteTable


class InMemoryStore(
    ConnectionTable, ChatTable, WriteTable, VectorTable, GlossTable, UsageTable, ImportTable
):
    """The ``Store`` port in memory, role by role as ``worldbook.ports.store`` splits it: books,
    entries and attachments (:class:`BookTable`, :class:`EntryTable`), vectors
    (:class:`VectorTable`), usage and token counts (:class:`UsageTable`), imports
    (:class:`ImportTable`), chats (:class:`ChatTable`), the living world (:class:`WriteTable`),
    glosses (:class:`GlossTable`)."""

    def purge_book(self, book_id: str) -> None:
        with self._lock:
            super().purge_book(book_id)
            self._forget_chat_states(book_id)
