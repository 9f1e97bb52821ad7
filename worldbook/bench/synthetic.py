"""Synthetic books and conversations for the latency suite (seeded, reproducible).

Names and ordinary words come from disjoint syllable sets, as in real lore: ordinary prose does
not spell entry names by accident, and names appear when someone writes them. Every tenth alias
is a CJK name, so the unspaced-script path of the matcher is exercised too.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from worldbook.core.drafts import EntryDraft
from worldbook.core.types import LoreBook, LoreEntry, Message

_NAMES = "ka lo ri an el dor mir tha us en gal ve sar on ith bel qua zu fen ro"
_WORDS = "the pa mo ni se bu to de li ma co fi gu ne so ha pe ti wa"
NAME_SYLLABLES = tuple(_NAMES.split(" "))
WORD_SYLLABLES = tuple(_WORDS.split(" "))
CJK = "東京山川花月風雪龍城王国森海光影星夜"


class Words:
    def __init__(self, rng: random.Random, vocabulary: int = 3000) -> None:
        self.rng = rng
        self.vocab = [self._word() for _ in range(vocabulary)]

    def _word(self) -> str:
        return "".join(self.rng.choice(WORD_SYLLABLES) for _ in range(self.rng.randint(1, 3)))

    def name(self) -> str:
        syllables = self.rng.randint(2, 4)
        return "".join(self.rng.choice(NAME_SYLLABLES) for _ in range(syllables)).title()

    def sentence(self, low: int = 8, high: int = 18) -> str:
        words = [self.rng.choice(self.vocab) for _ in range(self.rng.randint(low, high))]
        return " ".join(words).capitalize() + "."


def synthetic_aliases(rng: random.Random, count: int, name: Callable[[], str]) -> list[str]:
    """``count`` aliases, alternately one and two names; every tenth a 3-character CJK name."""
    aliases: list[str] = []
    for j in range(count):
        if j % 10 == 9:
            aliases.append("".join(rng.choice(CJK) for _ in range(3)))
        elif j % 2:
            aliases.append(f"{name()} {name()}")
        else:
            aliases.append(name())
    return aliases


def synthetic_drafts(rng: random.Random, n: int, aliases: int) -> list[EntryDraft]:
    """``n`` entries with ``aliases`` aliases each and 6–20 sentences of lore."""
    words = Words(rng)
    titles = list(dict.fromkeys(f"{words.name()} {words.name()}" for _ in range(n * 2)))[:n]
    drafts: list[EntryDraft] = []
    for i in range(n):
        names = synthetic_aliases(rng, aliases, words.name)
        sentences = [words.sentence() for _ in range(rng.randint(6, 20))]
        if rng.random() < 0.3:  # lore names another entry now and then (linked topics)
            sentences.insert(1, f"{titles[rng.randrange(n)]} is close by.")
        drafts.append(
            EntryDraft(title=titles[i], lore=" ".join(sentences), aliases=names[:aliases])
        )
    return drafts


def lore_book(
    book_id: str, drafts: list[EntryDraft], count: Callable[[str], int], *, indexed: bool = True
) -> LoreBook:
    """The core's view of the drafts (what the service would build from the store)."""
    entries = tuple(
        LoreEntry(
            id=f"{book_id}-e{i}",
            book_id=book_id,
            title=d.title,
            lore=d.lore,
            tokens=count(d.lore),
            aliases=tuple(d.aliases),
            canon=i < 2,
            indexed=indexed,
        )
        for i, d in enumerate(drafts)
    )
    return LoreBook(book_id, f"Synthetic {book_id}", entries, version="v1")


def conversation(
    rng: random.Random, drafts: list[EntryDraft], length: int, max_words: int = 50
) -> list[Message]:
    """Alternating assistant/user messages; user messages have at most ``max_words`` words and
    name 0–2 entries (title or alias), replies are longer and name 0–3."""
    words = Words(rng, 500)
    messages: list[Message] = []
    for i in range(length):
        user = i % 2 == 1
        size = rng.randint(12, max_words - 4) if user else rng.randint(30, 80)
        text = [rng.choice(words.vocab) for _ in range(size)]
        for _ in range(rng.choice([0, 1, 1, 2] if user else [0, 1, 2, 3])):
            draft = drafts[rng.randrange(len(drafts))]
            text.insert(rng.randrange(len(text) + 1), rng.choice((draft.title, *draft.aliases)))
        if user:
            messages.append(Message("user", " ".join(text)))
        else:
            messages.append(Message("assistant", " ".join(text), "Alice"))
    return messages
