"""The form of worldbook API keys, shared by the SQL store and the in-memory store.

A key is ``wb_`` and 43 random URL-safe characters. Only its sha256 is stored, with its first
ten characters in clear: enough to tell keys apart in a list and to find a presented key's row,
useless to guess the rest.
"""

from __future__ import annotations

import hashlib
import secrets

API_KEY_PREFIX = "wb_"
_SHOWN = 10


def new_api_key() -> tuple[str, str]:
    """A new API key: its plaintext (given to its owner once, stored only as :func:`hash_secret`)
    and its prefix (stored in clear: shown in key lists, and how a presented key finds its row)."""
    plaintext = API_KEY_PREFIX + secrets.token_urlsafe(32)
    return plaintext, plaintext[:_SHOWN]


def api_key_prefix(presented: object) -> str | None:
    """The prefix of a presented key, or None when it does not have the form of a key."""
    if not isinstance(presented, str) or not presented.startswith(API_KEY_PREFIX):
        return None
    return presented[:_SHOWN]


def hash_secret(plaintext: str) -> str:
    """What is stored of an API key's secret (its sha256; the plaintext never is)."""
    return hashlib.sha256(plaintext.encode("utf-8", "surrogatepass")).hexdigest()
