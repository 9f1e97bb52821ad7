"""The one thing the pure core asks of a tokenizer: count and cut text in a model's tokens.

Defined here, not in :mod:`worldbook.ports`, so the core depends on nothing outside itself;
the ports module re-exports it for the adapters (tiktoken, Hugging Face, estimate).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Tokenizer(Protocol):
    """Counts and cuts text in a model's tokens."""

    @property
    def id(self) -> str:
        """Stable id, part of every cached token count (``"tiktoken:cl100k_base"``)."""
        ...

    @property
    def is_estimate(self) -> bool:
        """True only for the character-based estimate; reports label such counts."""
        ...

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` that is at most ``max_tokens`` tokens."""
        ...
