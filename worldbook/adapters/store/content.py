"""What an entry's vector is computed from, and the hash that says whether a vector is current.

Defined once: the store stamps every entry with :func:`entry_content_hash`, stored vectors carry
the hash they were computed from, and a vector whose hash differs from the entry's is never used
(DESIGN §2 rule 6).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from worldbook.core.embed_text import entry_header


def entry_embed_text(title: str, aliases: Sequence[str], lore: str) -> str:
    """The text embedded for an entry: ``"Title (alias, alias)"``, a newline, then the lore.

    The header is :func:`worldbook.core.embed_text.entry_header`, so the first line names the
    entry and the indexing service repeats it in every chunk of a long entry.
    """
    lore = lore.strip()
    header = entry_header(title, aliases)
    return f"{header}\n{lore}" if lore else header


def entry_content_hash(title: str, aliases: Sequence[str], lore: str) -> str:
    """sha256 (hex) of :func:`entry_embed_text`."""
    return hashlib.sha256(entry_embed_text(title, aliases, lore).encode("utf-8")).hexdigest()
