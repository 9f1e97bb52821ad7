"""Cutting lore to a token cap at a sentence boundary where possible (DESIGN §2 budget table:
"each cut to 800 tokens (cut at a sentence boundary where possible, marked as cut)")."""

from __future__ import annotations

import re

from worldbook.core.tokens import Tokenizer
from worldbook.core.types import LoreText

# A sentence ends at . ! ? … , the CJK full stops and marks, the Devanagari danda, the Arabic
# question mark, the Ethiopic, Myanmar and Khmer full stops, optionally followed by closing
# quotes or brackets. (The Greek question mark is ";" and is left out: it would cut at every
# semicolon.) Western marks need whitespace after them so that
# "3.14" or "e.g.x" do not end a sentence; CJK marks do not (no spaces in those scripts).
_SENTENCE_END = re.compile(
    r"""(?:[.!?…](?:["'”’»)\]]*)(?=\s)"""
    r"""|[。！？｡।॥؟።။៕](?:[」』”’)\]）》]*))"""
    r"""|\n\s*\n"""
)

# Cutting at a sentence boundary must not throw away most of the allowance: if the last
# sentence end leaves less than this share of the cut, the cut falls back to a word boundary.
MIN_SENTENCE_KEEP = 0.5
_HEAD_CHARS_PER_TOKEN = 8


def _last_sentence_end(text: str) -> int:
    end = -1
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
    return end


def cut_to_tokens(
    text: str, max_tokens: int, tokenizer: Tokenizer, tokens: int | None = None
) -> LoreText:
    """``text`` if it is at most ``max_tokens`` tokens, else its longest prefix that ends a
    sentence (or, failing that, a word) within ``max_tokens`` tokens.

    ``tokens`` is the known token count of ``text`` (saves a count when the caller has it).
    A cut text is always counted here, and it is marked truncated only when it is shorter than
    ``text``: the count the budget charges is the count of the text that is sent, whatever
    count the caller passed.
    """
    count = tokenizer.count(text) if tokens is None else tokens
    if count <= max_tokens:
        return LoreText(text, count, False)
    # Tokenising 20,000 characters to keep 800 tokens is wasted work: real tokenizers average
    # well under _HEAD_CHARS_PER_TOKEN characters per token, so that head holds the cut. (If it
    # did not, the cut is merely shorter than it could be; it never exceeds ``max_tokens``.)
    prefix = tokenizer.truncate(text[: max_tokens * _HEAD_CHARS_PER_TOKEN], max_tokens)
    end = _last_sentence_end(prefix)
    if end >= 0 and end >= len(prefix) * MIN_SENTENCE_KEEP:
        kept = prefix[:end].rstrip()
    else:
        kept = _word_cut(prefix, text)
    kept_tokens = tokenizer.count(kept)
    if kept_tokens > max_tokens:  # a tokenizer whose prefix re-counts higher: be strict
        kept = tokenizer.truncate(kept, max_tokens)
        kept_tokens = tokenizer.count(kept)
    return LoreText(kept, kept_tokens, len(kept) < len(text))


def _word_cut(prefix: str, original: str) -> str:
    """Drop a word the token cut split in half (only when the prefix ends mid-word)."""
    if len(prefix) < len(original) and prefix and not original[len(prefix)].isspace():
        space = prefix.rfind(" ")
        if space > len(prefix) * MIN_SENTENCE_KEEP:
            return prefix[:space].rstrip()
    return prefix.rstrip()
