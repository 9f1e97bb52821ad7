"""A character-based token estimate, used only when a caller names it.

Latin-script text averages about four characters per token in the common BPE vocabularies,
while CJK ideographs, kana, hangul and most emoji are about one token each (or more). Counting
every character as a quarter token would under-count Chinese text roughly fourfold, so a
character whose Unicode East Asian Width (UAX #11) is ``W`` (wide) or ``F`` (full-width) costs
one whole token and every other character costs ``1 / chars_per_token``; the total is rounded
up. It is labelled ``is_estimate=True`` so reports can say the counts are approximate.

Ids: ``estimate`` (shorthand) and ``estimate:chars-per-token=<1-16>``; the canonical id always
spells the ratio out (``estimate:chars-per-token=4``) so cached counts name their rule.
"""

from __future__ import annotations

import unicodedata

from worldbook.errors import InvalidInput

DEFAULT_CHARS_PER_TOKEN = 4
_MAX_CHARS_PER_TOKEN = 16
PREFIX = "estimate"
_PARAM = "chars-per-token="
FORM = f"{PREFIX} or {PREFIX}:{_PARAM}<1-{_MAX_CHARS_PER_TOKEN}>"


def _is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


class EstimateTokenizer:
    """Counts ``ceil(narrow / chars_per_token + wide)`` tokens; see the module docstring."""

    is_estimate = True

    def __init__(self, chars_per_token: int = DEFAULT_CHARS_PER_TOKEN) -> None:
        if not 1 <= chars_per_token <= _MAX_CHARS_PER_TOKEN:
            raise InvalidInput(
                f"chars-per-token must be 1–{_MAX_CHARS_PER_TOKEN}; got {chars_per_token}.",
                field="tokenizer",
            )
        self._cpt = chars_per_token

    @property
    def id(self) -> str:
        return f"{PREFIX}:{_PARAM}{self._cpt}"

    def _units(self, char: str) -> int:
        # Work in integer units of 1/cpt token so rounding never drifts.
        return self._cpt if _is_wide(char) else 1

    def count(self, text: str) -> int:
        units = sum(self._units(char) for char in text)
        return -(-units // self._cpt)

    def truncate(self, text: str, max_tokens: int) -> str:
        # Exact: the count is additive per character, so the longest prefix is found greedily.
        budget = max(0, max_tokens) * self._cpt
        used = 0
        for i, char in enumerate(text):
            used += self._units(char)
            if used > budget:
                return text[:i]
        return text


def canonical(spec: str) -> str | None:
    """The canonical id for ``estimate[...]``, or None when ``spec`` is not of this family."""
    if spec == PREFIX:
        return f"{PREFIX}:{_PARAM}{DEFAULT_CHARS_PER_TOKEN}"
    if not spec.startswith(f"{PREFIX}:"):
        return None
    param = spec[len(PREFIX) + 1 :]
    value = param.removeprefix(_PARAM)
    if value == param or not value.isdigit():
        raise InvalidInput(f"Tokenizer {spec!r} is malformed; write {FORM}.", field="tokenizer")
    return f"{PREFIX}:{_PARAM}{int(value)}"


def load(canonical_id: str) -> EstimateTokenizer:
    return EstimateTokenizer(int(canonical_id.rsplit("=", 1)[1]))
