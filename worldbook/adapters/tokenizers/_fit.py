"""The shared truncation loop for tokenizers whose counts are not additive over prefixes.

BPE and WordPiece encode a prefix of a text differently from the matching slice of the full
text's encoding (a cut word re-splits), so "the text covered by the first ``k`` tokens" can
re-encode to more than ``k`` tokens. :func:`fit_prefix` starts from that candidate and shrinks
``k`` until the re-encoded prefix really fits, so ``count(result) <= max_tokens`` always holds.
"""

from __future__ import annotations

from collections.abc import Callable


def fit_prefix(
    text: str,
    max_tokens: int,
    count: Callable[[str], int],
    prefix_for: Callable[[int], str],
    total_tokens: int,
) -> str:
    """The longest token-aligned prefix of ``text`` whose own encoding fits ``max_tokens``.

    Args:
        count: the tokenizer's count.
        prefix_for: ``k`` -> the prefix of ``text`` covered by the first ``k`` tokens of the
            encoding of the whole text, ending on a whole character.
        total_tokens: ``count(text)``.
    """
    if total_tokens <= max_tokens:
        return text  # including texts of zero tokens (whitespace only, for WordPiece)
    k = max_tokens
    while k > 0:
        candidate = prefix_for(k)
        used = count(candidate)
        if used <= max_tokens:
            return candidate
        # Shrink by the overshoot (at least one token) rather than one at a time.
        k -= used - max_tokens
    return ""
