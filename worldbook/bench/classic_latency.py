"""Classic (keyword) engine latency beside a SillyTavern-style per-key regex scan
(docs/design/classic-engine.md).

Synthetic books of 100 / 500 / 2,000 entries with 10 keys each (names of the synthetic vocabulary,
one in ten a CJK name; 30 % of the entries name another entry in their lore, so recursion has
work), scan depth 10, recursion on (3 passes), budget 2,000 tokens, token counts precomputed as
the service does. Both methods see the same turns (the last 20 messages of a synthetic chat):

* classic: :func:`worldbook.core.classic.select_classic` with a warm matcher cache, trace and
  next chat state included;
* baseline: :class:`worldbook.bench.peers.KeywordScan` — one regex per key compiled once per
  book, every key of every entry tested against the joined window plus recursed content in each
  pass (``activated_recursive``), then SillyTavern's budget.

The one-off compile of a book version (automata) is reported apart. Used by
``benchmarks/bench_classic.py``; ``worldbook bench latency`` can call :func:`classic_rows`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from worldbook.adapters.tokenizers import get_tokenizer
from worldbook.bench.common import OneCore, percentiles
from worldbook.bench.peers import KeywordScan, PeerEntry, budget_by_order
from worldbook.bench.synthetic import CJK, NAME_SYLLABLES, Words, conversation, synthetic_drafts
from worldbook.core.classic import (
    ClassicBook,
    ClassicEntry,
    ClassicSettings,
    ClassicTurn,
    select_classic,
)
from worldbook.core.drafts import EntryDraft
from worldbook.core.types import Message
from worldbook.runtime.classic_cache import ClassicMatcherCache

SIZES = (100, 500, 2000)
KEYS_PER_ENTRY = 10
SCAN_DEPTH = 10
BUDGET = 2000
HISTORY = 20  # messages per turn handed to both methods


def _unique_keys(rng: random.Random, n: int) -> list[tuple[str, ...]]:
    """``KEYS_PER_ENTRY`` keys per entry, no key shared between entries (a curated book): one
    and two-word names of 3–4 syllables, and one four-character CJK name."""
    used: set[str] = set()

    def fresh(make: Callable[[], str]) -> str:
        while (key := make()) in used:
            pass
        used.add(key)
        return key

    def name() -> str:
        return "".join(rng.choice(NAME_SYLLABLES) for _ in range(rng.randint(3, 4))).title()

    def cjk() -> str:
        return "".join(rng.choice(CJK) for _ in range(4))

    keys = []
    for _ in range(n):
        entry = [fresh(lambda: f"{name()} {name()}")]
        entry += [fresh(name) if j % 2 else fresh(lambda: f"{name()} {name()}") for j in range(8)]
        entry.append(fresh(cjk))
        keys.append(tuple(entry))
    return keys


def classic_drafts(rng: random.Random, n: int) -> list[EntryDraft]:
    """Entries whose title and aliases are exactly their 10 keys; 6–20 sentences of lore, 30 %
    naming another entry (recursion has work)."""
    words = Words(rng)
    keys = _unique_keys(rng, n)
    drafts = []
    for i in range(n):
        sentences = [words.sentence() for _ in range(rng.randint(6, 20))]
        if rng.random() < 0.3:
            sentences.insert(1, f"{keys[rng.randrange(n)][0]} is close by.")
        title, *aliases = keys[i]
        drafts.append(EntryDraft(title=title, lore=" ".join(sentences), aliases=aliases))
    return drafts


def classic_book(drafts: list[EntryDraft], count: Callable[[str], int]) -> ClassicBook:
    """Each draft's title and aliases are its keys."""
    entries = []
    for i, d in enumerate(drafts):
        entries.append(
            ClassicEntry(
                id=str(i),
                book_id="bench",
                title=d.title,
                content=d.lore,
                position=i,
                keys=(d.title, *d.aliases),
                order=100 + i % 7,
                tokens=count(d.lore),
            )
        )
    settings = ClassicSettings(scan_depth=SCAN_DEPTH, token_budget=BUDGET, recursive_scanning=True)
    return ClassicBook("bench", "Synthetic", tuple(entries), settings, cache_key="v1")


def _turns(messages: list[Message], count: int) -> list[list[Message]]:
    ends = [i for i in range(HISTORY, len(messages) + 1) if messages[i - 1].role == "user"]
    return [messages[e - HISTORY : e] for e in ends[:count]]


def _time(calls: list[Callable[[], object]]) -> list[float]:
    samples = []
    for call in calls:
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def classic_row(
    n: int, turns: int, baseline_turns: int, *, shared_keys: bool = False
) -> dict[str, Any]:
    """Both methods on one synthetic book of ``n`` entries. ``shared_keys``: the stress case,
    keys drawn from the latency suite's small name space (``synthetic_drafts``), so one name is
    a key of many entries and a turn activates hundreds of them."""
    rng = random.Random(11_000 + n)
    count = get_tokenizer("cl100k_base").count
    drafts = synthetic_drafts(rng, n, KEYS_PER_ENTRY - 1) if shared_keys else classic_drafts(rng, n)
    book = classic_book(drafts, count)
    windows = _turns(conversation(rng, drafts, (turns + 10) * 2 + HISTORY), turns)
    cache = ClassicMatcherCache()
    classic_turns = [ClassicTurn((book,), w, count, chat_id="bench") for w in windows]
    started = time.perf_counter()
    cache.get(book)
    compile_s = time.perf_counter() - started
    for turn in classic_turns[:10]:  # warm-up
        select_classic(turn, None, cache)
    classic_s = _time([partial(select_classic, t, None, cache) for t in classic_turns])
    activated = [len(select_classic(t, None, cache).activations) for t in classic_turns]

    peers = [PeerEntry(e.title, e.content, e.tokens or 0, keys=e.keys) for e in book.entries]
    scan = KeywordScan(peers)

    def baseline(window: list[Message]) -> list[PeerEntry]:
        fired = scan.activated_recursive([m.content for m in window], SCAN_DEPTH, 3)
        return budget_by_order([scan.entries[i] for i in fired], BUDGET)

    baseline_s = _time([partial(baseline, w) for w in windows[:baseline_turns]])
    classic_p = percentiles(classic_s)
    baseline_p = percentiles(baseline_s)
    return {
        "entries": n,
        "keys_shared": shared_keys,
        "keys": sum(len(e.keys) for e in book.entries),
        "compile_ms": round(compile_s * 1000, 1),
        "classic_ms": classic_p,
        "baseline_ms": baseline_p,
        "ratio_p50": round(baseline_p["p50"] / classic_p["p50"], 1),
        "activations_mean": round(sum(activated) / max(1, len(activated)), 2),
    }


def classic_rows(
    sizes: tuple[int, ...] = SIZES,
    turns: int = 300,
    baseline_turns: int = 10,
    stress_baseline_turns: int = 2,
) -> dict[str, Any]:
    """The classic latency table on one core: one row per book size, plus the shared-keys
    stress row at the largest size (skipped when ``stress_baseline_turns`` is 0)."""
    with OneCore():
        rows = [classic_row(n, turns, baseline_turns) for n in sizes]
        if stress_baseline_turns and sizes:
            rows.append(classic_row(max(sizes), turns, stress_baseline_turns, shared_keys=True))
    return {
        "setup": {
            "keys_per_entry": KEYS_PER_ENTRY,
            "scan_depth": SCAN_DEPTH,
            "recursion_passes": 3,
            "budget": BUDGET,
            "messages_per_turn": HISTORY,
            "turns": turns,
            "baseline_turns": baseline_turns,
            "tokenizer": "cl100k_base",
        },
        "rows": rows,
    }
