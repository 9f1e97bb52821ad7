"""How much of each view's similarity is the language, not the meaning (ADR 0016 addendum).

    PYTHONPATH=. OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_language_pull.py \
        [--embedders e5-small,use-m3] [--output benchmarks/results/language_pull.json]

On the parallel neutral corpus (``worldbook/bench/language_corpus``: the same sentences in 16
languages, written for the project), for each model, over the corpus languages it reads:

- *translation*: mean cosine of a sentence and its translation;
- *same language*: mean cosine of two different sentences in one language;
- *other language*: mean cosine of two different sentences in two languages;
- *pull* = same language − other language: what sharing a language adds to unrelated texts;
- *margin* = translation − other language: what sharing the meaning adds.

``pull / margin`` is the share of the meaning signal a shared language can fake. It is what the
language correction (ADR 0003) removes, so it says which view has something to correct.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from worldbook.adapters.embedders import load_embedder
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.language_agnostic import LanguageSubspace, corpus_digest, read_corpus
from worldbook.service.aligned_view import USE_LANGUAGES

CACHE = Path(__file__).resolve().parent / ".cache"
RESULTS = Path(__file__).resolve().parent / "results" / "language_pull.json"
READS: dict[str, frozenset[str] | None] = {"use-m3": USE_LANGUAGES}  # None: every language

Matrix = npt.NDArray[np.float32]


def _off_diagonal_mean(scores: Matrix) -> float:
    n = scores.shape[0]
    return float((scores.sum() - np.trace(scores)) / (n * (n - 1)))


def pull_of(vectors: dict[str, Matrix]) -> dict[str, float]:
    """The four means and the pull / margin share, over every pair of languages."""
    pairs = list(itertools.combinations(vectors, 2))
    translation = np.mean([float((vectors[a] * vectors[b]).sum(1).mean()) for a, b in pairs])
    same = np.mean([_off_diagonal_mean(v @ v.T) for v in vectors.values()])
    other = np.mean([_off_diagonal_mean(vectors[a] @ vectors[b].T) for a, b in pairs])
    pull, margin = same - other, translation - other
    return {
        "translation": round(float(translation), 4),
        "same_language": round(float(same), 4),
        "other_language": round(float(other), 4),
        "pull": round(float(pull), 4),
        "margin": round(float(margin), 4),
        "pull_share": round(float(pull / margin), 3),
    }


def measure(name: str, threads: int) -> dict[str, Any]:
    embedder = CachedEmbedder(load_embedder(name, threads=threads), CACHE)
    reads = READS.get(name)
    corpus = {
        lang: lines for lang, lines in read_corpus().items() if reads is None or lang in reads
    }
    vectors = {
        lang: np.asarray(embedder.embed_passages(lines), dtype=np.float32)
        for lang, lines in corpus.items()
    }
    subspace = LanguageSubspace(np.stack([v.mean(axis=0) for v in vectors.values()]))
    return {
        "model_id": embedder.model_id,
        "languages": sorted(corpus),
        **pull_of(vectors),
        "language_means_singular_values": [round(float(v), 3) for v in subspace.singular_values],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="e5-small,use-m3")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    rows = [measure(name, args.threads) for name in args.embedders.split(",")]
    columns = ["model", "languages", "translation", "same language", "other language"]
    columns += ["pull", "margin", "pull / margin"]
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in rows:
        cells = [
            row[k] for k in ("translation", "same_language", "other_language", "pull", "margin")
        ]
        print(
            f"| {row['model_id']} | {len(row['languages'])} | "
            + " | ".join(f"{c:.3f}" for c in cells)
            + f" | {row['pull_share']:.2f} |"
        )
    report = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "corpus_digest": corpus_digest(),
        "models": rows,
    }
    common.write_results(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
