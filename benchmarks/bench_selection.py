"""Selection latency on a 2,000-entry × 50-alias book (DESIGN §2).

Measures, in one run on one core:

* ``select()`` per turn (warm matcher cache; token counts and semantic hits computed before,
  as the service does), p50/p99;
* the literal matcher alone (normalise + scan the last user message and the last two replies);
* two SillyTavern-style baselines over the same three messages joined: one regex compiled per
  key per turn (what a scan that builds its key regexes on each turn costs), and the same
  regexes compiled once, searched per key per turn (a generous baseline);
* for context: the one-off automaton build per book version and the brute-force numpy search.

Writes ``benchmarks/results/selection.json``.
Run: ``.venv/bin/python benchmarks/bench_selection.py`` (``--turns``, ``--baseline-turns`` to
shorten; the compile-per-turn baseline takes ~20 s a turn).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from worldbook.adapters.tokenizers import get_tokenizer  # noqa: E402
from worldbook.bench.common import machine, now_iso, percentiles, versions, write_results  # noqa: E402
from worldbook.bench.synthetic import (  # noqa: E402
    NAME_SYLLABLES,
    WORD_SYLLABLES,
    synthetic_aliases,
)
from worldbook.core.matching import match_form  # noqa: E402
from worldbook.core.selection import select  # noqa: E402
from worldbook.core.tokens import Tokenizer  # noqa: E402
from worldbook.core.types import (  # noqa: E402
    LoreBook,
    LoreEntry,
    Message,
    ModelProfile,
    SelectionRules,
    SemanticHit,
    Turn,
)
from worldbook.runtime.matcher_cache import MatcherCache  # noqa: E402
from worldbook.testing import HashingEmbedder  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "selection.json"
# Names and ordinary words come from the disjoint syllable sets of worldbook.bench.synthetic, as
# in real lore: ordinary prose does not spell entry names by accident.


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(NAME_SYLLABLES) for _ in range(rng.randint(3, 4))).title()


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(WORD_SYLLABLES) for _ in range(rng.randint(1, 3)))


def build_book(rng: random.Random, tokenizer_count: object, n: int, aliases: int) -> LoreBook:
    vocab = [_word(rng) for _ in range(3000)]
    titles = [f"{_name(rng)} {_name(rng)}" for _ in range(n)]
    entries = []
    for i in range(n):
        names = synthetic_aliases(rng, aliases, lambda: _name(rng))
        sentences = []
        # Mostly 150-700 tokens; one entry in ten is long (40-60 sentences, over the 800-token
        # cut), so cold turns pay for cutting as real books with a few long entries do.
        for _ in range(rng.randint(40, 60) if i % 10 == 5 else rng.randint(6, 30)):
            words = [rng.choice(vocab) for _ in range(rng.randint(6, 14))]
            if rng.random() < 0.15:  # lore names other entries now and then (linked topics)
                other = rng.randrange(n)
                words.insert(rng.randrange(len(words)), titles[other])
            sentences.append(" ".join(words).capitalize() + ".")
        lore = " ".join(sentences)
        entries.append(
            LoreEntry(
                id=f"e{i}",
                book_id="big",
                title=titles[i],
                lore=lore,
                tokens=tokenizer_count(lore),  # type: ignore[operator]
                aliases=tuple(names),
                canon=i < 3,
                indexed=True,
            )
        )
    return LoreBook("big", "Synthetic", tuple(entries), character="Alice", version="v1")


def build_conversation(rng: random.Random, book: LoreBook, length: int) -> list[Message]:
    vocab = [_word(rng) for _ in range(500)]
    messages = []
    for i in range(length):
        words = [rng.choice(vocab) for _ in range(rng.randint(20, 60))]
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            e = book.entries[rng.randrange(len(book.entries))]
            words.insert(rng.randrange(len(words)), rng.choice((e.title, *e.aliases)))
        if i % 2:
            messages.append(Message("user", " ".join(words)))
        else:
            messages.append(Message("assistant", " ".join(words), "Alice"))
    return messages


def summary(samples_s: list[float]) -> dict[str, float]:
    """``common.percentiles`` under this file's key names (n, p50_ms, p99_ms, mean_ms, max_ms)."""
    return {k if k == "n" else f"{k}_ms": v for k, v in percentiles(samples_s).items()}


def st_keys(book: LoreBook) -> list[str]:
    return [k for e in book.entries for k in (e.title, *e.aliases)]


def baseline_compile_per_turn(keys: list[str], text: str) -> int:
    """SillyTavern-style: the haystack lower-cased, one whole-word regex built per key."""
    hay = text.lower()
    hits = 0
    for key in keys:
        if re.compile(r"(?:^|\W)(" + re.escape(key.lower()) + r")(?:$|\W)").search(hay):
            hits += 1
    return hits


def _args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--aliases", type=int, default=50)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--baseline-turns", type=int, default=3)
    parser.add_argument("--k", type=int, default=32, help="semantic hits per turn")
    return parser.parse_args()


def _turns(
    book: LoreBook,
    conversation: list[Message],
    rules: SelectionRules,
    profile: ModelProfile,
    args: argparse.Namespace,
) -> tuple[list[Turn], list[float]]:
    """Windows of 6 messages ending on a user message, each with its ``k`` semantic hits, and
    the seconds the numpy search of each took."""
    embedder = HashingEmbedder()
    passages = embedder.embed_passages(
        [f"{e.title}. {' '.join(e.aliases[:5])}. {e.lore[:300]}" for e in book.entries]
    )
    queries = embedder.embed_queries([m.content for m in conversation])
    ends = [i for i in range(6, len(conversation)) if conversation[i - 1].role == "user"]
    search_s: list[float] = []
    turns: list[Turn] = []
    for end in ends[: args.turns]:
        t0 = time.perf_counter()
        scores = (queries[end - rules.semantic_messages : end] @ passages.T).mean(axis=0)
        top = np.argpartition(-scores, args.k)[: args.k]
        top = top[np.argsort(-scores[top], kind="stable")]
        search_s.append(time.perf_counter() - t0)
        hits = tuple(SemanticHit("big", f"e{i}", float(scores[i])) for i in top)
        turns.append(Turn((book,), tuple(conversation[end - 6 : end]), profile, hits))
    return turns, search_s


def _time_select(
    turns: list[Turn], rules: SelectionRules, tokenizer: Tokenizer, cache: MatcherCache
) -> tuple[list[float], list[float], list[tuple[int, int]]]:
    """Cold and warm seconds of ``select`` per turn, and each turn's (injected, index) sizes.

    Cold: the first time an entry is injected its cut (tokenising up to ~6,400 characters) and
    its index line are computed; the cache remembers them per book version. Warm: the same
    turns again, as for a book in steady use."""
    select_cold_s: list[float] = []
    sizes: list[tuple[int, int]] = []
    for t in turns:
        t0 = time.perf_counter()
        sel = select(t, rules, tokenizer, matcher_cache=cache)
        select_cold_s.append(time.perf_counter() - t0)
        sizes.append((len(sel.injected), len(sel.index)))
    select_s: list[float] = []
    for t in turns:
        t0 = time.perf_counter()
        select(t, rules, tokenizer, matcher_cache=cache)
        select_s.append(time.perf_counter() - t0)
    return select_cold_s, select_s, sizes


def _scanned(t: Turn) -> list[str]:
    """What the literal scan reads: the last user message and the last two replies."""
    msgs = t.messages
    user = [m.content for m in msgs if m.role == "user"][-1:]
    replies = [m.content for m in msgs if m.role == "assistant"][-2:]
    return user + replies


def _time_matcher(turns: list[Turn], matcher: Any) -> list[float]:
    matcher_s: list[float] = []
    for t in turns:
        texts = _scanned(t)
        t0 = time.perf_counter()
        for text in texts:
            matcher.find(match_form(text), prepared=True)
        matcher_s.append(time.perf_counter() - t0)
    return matcher_s


def _time_baselines(turns: list[Turn], keys: list[str]) -> tuple[list[float], list[float]]:
    """SillyTavern-style regexes: compiled per turn, and compiled once."""
    compiled = [re.compile(r"(?:^|\W)(" + re.escape(k.lower()) + r")(?:$|\W)") for k in keys]
    base_compile_s: list[float] = []
    base_search_s: list[float] = []
    for t in turns:
        text = "\n".join(_scanned(t))
        t0 = time.perf_counter()
        baseline_compile_per_turn(keys, text)
        base_compile_s.append(time.perf_counter() - t0)
        hay = text.lower()
        t0 = time.perf_counter()
        sum(1 for c in compiled if c.search(hay))
        base_search_s.append(time.perf_counter() - t0)
    return base_compile_s, base_search_s


def _ratios(rows: dict[str, dict[str, Any]]) -> dict[str, float]:
    m50 = rows["literal_matcher"]["p50_ms"]
    return {
        "compiled_per_turn_over_matcher_p50": round(
            rows["baseline_regex_compiled_per_turn"]["p50_ms"] / m50, 1
        ),
        "precompiled_over_matcher_p50": round(
            rows["baseline_regex_precompiled"]["p50_ms"] / m50, 1
        ),
    }


def _print_report(
    args: argparse.Namespace,
    keys: int,
    build_s: float,
    rows: dict[str, dict[str, Any]],
    ratios: dict[str, float],
) -> None:
    print(f"book: {args.entries} entries × {args.aliases} aliases = {keys} keys")
    print(f"matcher build (once per book version): {build_s * 1000:.0f} ms")
    print(f"{'measure':36} {'n':>5} {'p50 ms':>10} {'p99 ms':>10} {'max ms':>10}")
    for name, row in rows.items():
        print(
            f"{name:36} {row['n']:>5} {row['p50_ms']:>10.3f} {row['p99_ms']:>10.3f} "
            f"{row['max_ms']:>10.3f}"
        )
    for name, value in ratios.items():
        print(f"ratio {name}: {value}×")
    print(
        "targets (warm): select p50 ≤ 2 ms:",
        rows["select_warm"]["p50_ms"] <= 2,
        "| p99 ≤ 5 ms:",
        rows["select_warm"]["p99_ms"] <= 5,
        "| matcher ≥ 20× baseline:",
        ratios["compiled_per_turn_over_matcher_p50"] >= 20,
    )


def _setup(
    args: argparse.Namespace,
    book: LoreBook,
    keys: int,
    tokenizer: Tokenizer,
    profile: ModelProfile,
    rules: SelectionRules,
    sizes: list[tuple[int, int]],
    build_s: float,
) -> dict[str, Any]:
    """The ``setup`` section of the results: what was measured, and on what."""
    return {
        "entries": args.entries,
        "aliases_per_entry": args.aliases,
        "keys": keys,
        "message_window": 6,
        "semantic_hits_per_turn": args.k,
        "tokenizer": tokenizer.id,
        "input_window": profile.input_window,
        "entry_tokens_p50": float(np.percentile([e.tokens for e in book.entries], 50)),
        "entry_tokens_max": max(e.tokens for e in book.entries),
        "share_entries_over_cut": round(
            sum(e.tokens > rules.full_entry_tokens_max for e in book.entries) / len(book.entries),
            3,
        ),
        "mean_injected": statistics.fmean(s[0] for s in sizes),
        "mean_index_lines": statistics.fmean(s[1] for s in sizes),
        "matcher_build_ms": round(build_s * 1000, 1),
        "load_average_at_end": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def main() -> None:
    args = _args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    rng = random.Random(20261202)
    tokenizer = get_tokenizer("cl100k_base")
    book = build_book(rng, tokenizer.count, args.entries, args.aliases)
    conversation = build_conversation(rng, book, args.turns * 2 + 8)
    rules = SelectionRules()
    profile = ModelProfile(128_000, tokenizer_id="cl100k_base", supports_tools=True)
    turns, search_s = _turns(book, conversation, rules, profile, args)

    cache = MatcherCache()
    t0 = time.perf_counter()
    matcher = cache.get(book)
    build_s = time.perf_counter() - t0

    select_cold_s, select_s, sizes = _time_select(turns, rules, tokenizer, cache)
    matcher_s = _time_matcher(turns, matcher)
    keys = st_keys(book)
    base_compile_s, base_search_s = _time_baselines(turns[: args.baseline_turns], keys)

    rows = {
        "select_warm": summary(select_s),
        "select_cold_cuts": summary(select_cold_s),
        "literal_matcher": summary(matcher_s),
        "baseline_regex_compiled_per_turn": summary(base_compile_s),
        "baseline_regex_precompiled": summary(base_search_s),
        "numpy_search_context": summary(search_s),
    }
    ratios = _ratios(rows)
    _print_report(args, len(keys), build_s, rows, ratios)
    result = {
        "benchmark": "selection",
        "date": now_iso(),
        "machine": {**machine(), "pinned_to_one_core": hasattr(os, "sched_setaffinity")},
        "versions": {
            "python": platform.python_version(),
            **versions(("numpy", "pyahocorasick", "tiktoken", "worldbook")),
        },
        "setup": _setup(args, book, len(keys), tokenizer, profile, rules, sizes, build_s),
        "results": rows,
        "ratios": ratios,
    }
    write_results(RESULTS, result)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
