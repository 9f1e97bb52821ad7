"""The small Protocols the service layer talks to; adapters implement them, fakes ship in
:mod:`worldbook.testing`.

- :mod:`worldbook.ports.store`: the store's roles (books and entries, vectors and index state,
  usage, token counts, imports, chats, keys, living-world writes, connections, glosses) and
  :class:`Store`, all of them;
- :mod:`worldbook.ports.search`: :class:`Embedder`, :class:`VectorIndex` and their data;
- :mod:`worldbook.ports.work`: :class:`IndexQueue`, :class:`GlossQueue`, :class:`UsageSink`,
  :class:`TokenizerSource`.

Only plain data and numpy arrays cross these boundaries. Adapters translate their foreign
errors into :mod:`worldbook.errors` types before they leave.
"""

from worldbook.core.tokens import Tokenizer
from worldbook.ports.search import (
    BookVectors,
    Embedder,
    IndexedEntries,
    VectorIndex,
    VectorLoader,
    Vectors,
)
from worldbook.ports.store import (
    BookStore,
    ChatStore,
    ConnectionStore,
    EntryReader,
    GlossStore,
    ImportStore,
    KeyStore,
    Position,
    Store,
    TokenCountStore,
    UsageStore,
    VectorStore,
    WriteStore,
)
from worldbook.ports.work import GlossQueue, IndexQueue, TokenizerSource, UsageSink

__all__ = [
    "BookStore",
    "BookVectors",
    "ChatStore",
    "ConnectionStore",
    "Embedder",
    "EntryReader",
    "GlossQueue",
    "GlossStore",
    "ImportStore",
    "IndexQueue",
    "IndexedEntries",
    "KeyStore",
    "Position",
    "Store",
    "TokenCountStore",
    "Tokenizer",
    "TokenizerSource",
    "UsageSink",
    "UsageStore",
    "VectorIndex",
    "VectorLoader",
    "VectorStore",
    "Vectors",
    "WriteStore",
]
