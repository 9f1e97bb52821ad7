"""A scanned text in the forms the classic matcher needs, each computed once on first use."""

from __future__ import annotations

from worldbook.core.classic.keys import normalized
from worldbook.core.matching import spaced_form


class TextForms:
    """``raw`` (regex keys), normalised with or without case folding (substring keys, edge
    checks), and the spaced forms of both (whole-word keys)."""

    __slots__ = ("_norm", "_spaced", "raw")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self._norm: list[str | None] = [None, None]
        self._spaced: list[str | None] = [None, None]

    def norm(self, case_sensitive: bool) -> str:
        slot = int(case_sensitive)
        value = self._norm[slot]
        if value is None:
            value = self._norm[slot] = normalized(self.raw, case_sensitive)
        return value

    def spaced(self, case_sensitive: bool) -> str:
        slot = int(case_sensitive)
        value = self._spaced[slot]
        if value is None:
            value = self._spaced[slot] = spaced_form(self.norm(case_sensitive))
        return value

    def form(self, variant: int) -> str:
        """The automaton input of a plain-key variant (see ``keys.variant_of``)."""
        case_sensitive = variant >= 2
        return self.spaced(case_sensitive) if variant & 1 else self.norm(case_sensitive)
