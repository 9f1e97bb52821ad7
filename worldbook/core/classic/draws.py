"""Seeded draws: the same turn gives the same draw in any process (DESIGN §2 rule 10).

A draw is a hash of (seed, chat id, chat length, what is drawn), not ``random``: stable within a
turn, across replicas and restarts, and independent of the order in which entries are examined.
"""

from __future__ import annotations

import hashlib

_SCALE = float(1 << 64)


def uniform(*parts: object) -> float:
    """A number in [0, 1) determined by ``parts``."""
    text = "\x1f".join(str(p) for p in parts)
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / _SCALE


class TurnDraws:
    """The draws of one turn: probability per entry (classic.md §1 rule 15) and the weighted
    pick of each inclusion group (classic.md §2.5)."""

    __slots__ = ("_base",)

    def __init__(self, seed: int | str, chat_id: str | None, chat_length: int) -> None:
        self._base = (seed, chat_id or "", chat_length)

    def probability(self, book_id: str, entry_id: str) -> float:
        """A draw in [0, 100): the entry passes when the draw is below its probability, so 100
        always passes and 0 never does."""
        return 100.0 * uniform(*self._base, "probability", book_id, entry_id)

    def group(self, group: str, pass_no: int) -> float:
        """A draw in [0, 1) for the weighted pick of ``group`` in pass ``pass_no``."""
        return uniform(*self._base, "group", group, pass_no)
