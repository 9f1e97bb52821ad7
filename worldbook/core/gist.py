"""The one-sentence gist of an entry for its world-index line (DESIGN §1 "World index":
"one line per entry (title + one-sentence gist)")."""

from __future__ import annotations

import re

from worldbook.core.tokens import Tokenizer
from worldbook.core.truncation import cut_to_tokens

# Only the head of the lore is searched: a gist is its first sentence, and lore can be 20,000
# characters long.
_HEAD_CHARS = 1200
_FIRST_SENTENCE = re.compile(r"""^.*?(?:[.!?…]["'”’»)\]]*(?=\s|$)|[。！？｡।॥؟።။៕])""", re.DOTALL)
_MARKUP = re.compile(r"^[#>*\-\s]+")
_SPACES = re.compile(r"\s+")


def first_sentence(lore: str) -> str:
    """The first sentence of ``lore`` on one line (markdown heading/bullet marks dropped)."""
    head = lore[:_HEAD_CHARS]
    for paragraph in head.split("\n"):
        paragraph = _MARKUP.sub("", paragraph).strip()
        if paragraph:
            head = paragraph
            break
    else:
        return ""
    match = _FIRST_SENTENCE.match(head)
    sentence = match.group(0) if match else head
    return _SPACES.sub(" ", sentence).strip()


def index_line(title: str, lore: str, tokenizer: Tokenizer, max_gist_tokens: int) -> str:
    """``"Title — first sentence"``, the gist cut to ``max_gist_tokens`` tokens (an ellipsis
    marks a cut gist). A gist that only repeats the title is dropped."""
    gist = first_sentence(lore)
    if gist:
        cut = cut_to_tokens(gist, max_gist_tokens, tokenizer)
        gist = cut.text + ("…" if cut.truncated else "")
    if not gist or gist.rstrip(".:;,!?。 ").casefold() == title.casefold():
        return title
    return f"{title} — {gist}"
