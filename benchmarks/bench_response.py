"""What serialising a turn's answer costs, and what each cut buys
(docs/design/selection.md, "Rendering").

A turn on a 2,000-entry book (50 aliases each, semantic hits, a 128k window so the per-turn
lore and the index are full) is selected once; then, many times over, its answer is built and
encoded the ways the API can: the selection JSON with the full trace (one record per entry
considered) or the summary trace, both renderings (OpenAI + Anthropic) or one, encoded with the
standard ``json`` module or with ``orjson``. Printed as a table of p50 per variant with the
ratio to today's default (full trace, both renderings, stdlib json); written to
``benchmarks/results/response.json`` with machine, versions and date.

    .venv/bin/python benchmarks/bench_response.py [--entries 2000] [--repeat 300]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from worldbook.adapters.tokenizers.registry import get_tokenizer
from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.bench.synthetic import conversation, lore_book, synthetic_drafts
from worldbook.core.rendering import RenderedPrompt, render
from worldbook.core.selection import select
from worldbook.core.selection_json import selection_to_json
from worldbook.core.types import ModelProfile, Selection, SelectionRules, SemanticHit, Turn
from worldbook.runtime.matcher_cache import MatcherCache

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "response.json"


def _turn(entries: int) -> tuple[Turn, Any]:
    rng = random.Random(entries)
    tokenizer = get_tokenizer("cl100k_base")
    drafts = synthetic_drafts(rng, entries, 50)
    book = lore_book("b", drafts, tokenizer.count)
    messages = tuple(conversation(rng, drafts, 6))
    nprng = np.random.default_rng(entries)
    picks = nprng.choice(len(book.entries), size=40, replace=False)
    hits = tuple(
        SemanticHit("b", book.entries[int(i)].id, float(1 - k / 100)) for k, i in enumerate(picks)
    )
    return Turn((book,), messages, ModelProfile(128_000, "cl100k_base"), hits), tokenizer


def _p50_ms(fn: Callable[[], object], repeat: int) -> float:
    for _ in range(5):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _variants(selection: Selection, rendered: RenderedPrompt) -> dict[str, Callable[[], bytes]]:
    """One response encoder per trace level × renderings kept × JSON library."""

    def body(trace: str, renderings: str) -> dict[str, Any]:
        out = selection_to_json(selection, rendered, trace=trace)  # type: ignore[arg-type]
        if renderings == "openai":
            out.pop("anthropic")
        return out

    def stdlib(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False).encode()

    def variant(trace: str, renderings: str, encode: Callable[[Any], bytes]) -> Callable[[], bytes]:
        return lambda: encode(body(trace, renderings))

    variants: dict[str, Callable[[], bytes]] = {}
    for trace in ("full", "summary"):
        for renderings in ("both", "openai"):
            for name, encode in (("json", stdlib), ("orjson", orjson.dumps)):
                variants[f"trace={trace} render={renderings} {name}"] = variant(
                    trace, renderings, encode
                )
    return variants


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    turn, tokenizer = _turn(args.entries)
    selection = select(turn, SelectionRules(), tokenizer, matcher_cache=MatcherCache())
    rendered = render(selection, turn.profile)

    variants = _variants(selection, rendered)
    rows = []
    baseline = _p50_ms(variants["trace=full render=both json"], args.repeat)
    select_ms = _p50_ms(
        lambda: select(turn, SelectionRules(), tokenizer, matcher_cache=MatcherCache()), 30
    )
    for name, fn in variants.items():
        p50 = _p50_ms(fn, args.repeat)
        rows.append(
            {
                "variant": name,
                "p50_ms": round(p50, 3),
                "bytes": len(fn()),
                "vs_default": round(baseline / p50, 2),
            }
        )
    print(
        f"turn: {len(selection.trace)} trace records, {len(selection.injected)} in full, "
        f"{len(selection.index)} index lines; select() p50 {select_ms:.2f} ms (cold caches)"
    )
    print(f"{'variant':<40} {'p50 ms':>8} {'bytes':>9} {'× faster':>9}")
    for row in rows:
        print(
            f"{row['variant']:<40} {row['p50_ms']:>8.3f} {row['bytes']:>9} {row['vs_default']:>9}"
        )
    write_results(
        RESULTS,
        {
            "benchmark": "response serialisation (issue 13 item 4)",
            "date": now_iso(),
            "machine": machine(),
            "versions": versions(),
            "entries": args.entries,
            "trace_records": len(selection.trace),
            "rows": rows,
        },
    )


if __name__ == "__main__":
    main()
