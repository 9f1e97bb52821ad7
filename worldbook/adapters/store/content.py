"""The hash that says whether a stored vector is current.

Defined once: the store stamps every entry with :func:`entry_content_hash`, stored vectors carry
the hash they were computed from, and a vector whose hash differs from the entry's is never used
(DESIGN §2 rule 6). The text hashed is the one embedded,
:func:`worldbook.core.embed_text.entry_text`, so any change to what is embedded changes the hash.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from worldbook.core.embed_text import entry_text


def entry_content_hash(title: str, aliases: Sequence[str], lore: str) -> str:
    """sha256 (hex) of :func:`worldbook.core.embed_text.entry_text`."""
    return hashlib.sha256(entry_text(title, aliases, lore).encode("utf-8")).hexdigest()
