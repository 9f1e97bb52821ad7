"""LAReQA on XQuAD-R (mAP@20, one pool of 11 languages) with training-free corrections, and the
XQuAD R@5 check that a correction does not cost single-language retrieval (ADR 0003).

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_lareqa.py [--engine]

Nothing is fit on XQuAD or XQuAD-R. What each method estimates, and from what:

* ``raw`` — e5-small as is.
* ``proj(corpus)`` — the language subspace from the parallel neutral corpus
  (``worldbook/bench/language_corpus``, 16 languages) removed from the query vector only
  (candidates stay raw, as stored vectors would).
* ``proj(corpus) both`` — removed from both sides and renormalised.
* ``centre cand (pool)`` / ``z-score per lang (pool)`` / ``balanced (pool)`` — statistics of the
  candidate pool itself, by candidate language: what an engine can compute from a book's own
  entries at query time (candidates' languages as labelled here; the ``detected`` variants
  guess each sentence's language from its text, ``worldbook.bench.language_id``).
* ``proj(corpus+pool)`` — the subspace spanned by the corpus means and the pool's own
  per-language means.
* ``oracle: centre by question means`` — uses the XQuAD-R *questions'* language means: fit on
  the evaluation queries, shown only as a ceiling, never a candidate.

Vectors are memoised in ``benchmarks/.cache`` (the 13,014 sentences take ~5 min on one core).
Writes ``benchmarks/results/lareqa.json``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.embedders import load_embedder
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.language_agnostic import (
    LanguageSubspace,
    QueryProjected,
    RowCentred,
    balanced_merge,
    centre_by_language,
    corpus_digest,
    language_means,
    read_corpus,
    standardise_per_language,
)
from worldbook.bench.language_id import detect_language
from worldbook.bench.lareqa import LAREQA_LANGUAGES, evaluate, load_pool, rank_pool
from worldbook.bench.xquad import engine_method, load_xquad, raw_method
from worldbook.ports import Embedder

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()  # beside the checkout
CACHE = ROOT / "benchmarks" / ".cache"  # vectors kept between runs
RESULTS = ROOT / "benchmarks" / "results" / "lareqa.json"


def methods(pool: Any, p: np.ndarray, q: np.ndarray, corpus: LanguageSubspace) -> dict[str, Any]:
    """name -> (query vectors, scorer) for every method compared."""
    n = len(LAREQA_LANGUAGES)
    groups = [pool.sentence_lang == i for i in range(n)]
    pool_means = language_means(p, pool.sentence_lang, n)
    q_means = language_means(q, pool.question_lang, n)
    both_p = corpus.remove_normalised(p)
    centred_p = p - pool_means[pool.sentence_lang]
    stacked = np.vstack(
        [corpus.basis * corpus.singular_values[:, None], pool_means - pool_means.mean(0)]
    )
    mixed = LanguageSubspace(np.vstack([stacked, np.zeros((1, p.shape[1]), np.float32)]), 25)
    q_corr = corpus.remove(q)
    detected = [detect_language(s) for s in pool.sentences]
    detected_centred = centre_by_language(p, detected)
    both_centred = centre_by_language(both_p, detected)

    def dot(cands: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        return lambda qv, _rows: qv @ cands.T

    return {
        "raw": (q, dot(p)),
        "proj(corpus)": (q_corr, dot(p)),
        "proj(corpus) both": (corpus.remove_normalised(q), dot(both_p)),
        "centre cand (pool)": (q, dot(centred_p)),
        "z-score per lang (pool)": (q, lambda qv, _r: standardise_per_language(qv @ p.T, groups)),
        "balanced (pool)": (q, lambda qv, _r: balanced_merge(qv @ p.T, groups)),
        "proj(corpus) + z-score per lang (pool)": (
            q_corr,
            lambda qv, _r: standardise_per_language(qv @ p.T, groups),
        ),
        "proj(corpus+pool)": (mixed.remove(q), dot(p)),
        "centre per detected lang (pool)": (q, dot(detected_centred)),
        "proj(corpus) + centre per detected lang (pool)": (q_corr, dot(detected_centred)),
        "proj(corpus) both + centre per detected lang (pool)": (
            corpus.remove_normalised(q),
            dot(both_centred),
        ),
        "oracle: centre by question means (fit on XQuAD-R questions)": (
            q - q_means[pool.question_lang],
            dot(centred_p),
        ),
    }


def xquad_check(
    folder: Path,
    embedder: Embedder,
    subspace: LanguageSubspace,
    engine: bool,
) -> dict[str, Any]:
    """XQuAD R@5 per language, raw model (and engine path) before/after the corrections: the
    query-only projection, and the recommended one (queries and entry rows projected and
    renormalised, rows centred per detected language)."""
    data = load_xquad(folder, quick=False)
    rows = RowCentred(QueryProjected(embedder, subspace, rows=True))
    out = {
        "raw": raw_method(data, embedder),
        "raw+proj(query only)": raw_method(data, QueryProjected(embedder, subspace)),
        "raw+proj both+centre": raw_method(data, rows),
    }
    if engine:
        out["engine"] = engine_method(data, embedder)
        out["engine+proj(query only)"] = engine_method(data, QueryProjected(embedder, subspace))
        out["engine+proj both+centre"] = engine_method(data, rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine", action="store_true", help="also the XQuAD engine path")
    parser.add_argument("--rank", type=int, default=12, help="language subspace rank")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    args = parser.parse_args()
    started = time.perf_counter()
    embedder = CachedEmbedder(load_embedder("e5-small", threads=1), CACHE)
    pool = load_pool(args.samples / "xquad-r")
    p = embedder.embed_passages(pool.sentences)
    q = embedder.embed_queries(pool.questions)
    corpus = LanguageSubspace.from_corpus(embedder, rank=args.rank)
    results: dict[str, Any] = {}
    for name, (queries, scorer) in methods(pool, p, q, corpus).items():
        results[name] = evaluate(pool, rank_pool(queries, scorer))
        r = results[name]
        worst = min(v["r@1"] for v in r["per_language"].values())
        print(
            f"{name:62} mAP@20 {r['map@20']:.4f}  R@1 {r['r@1']:.4f}  worst-lang R@1 "
            f"{worst:.4f}  same-lang top20 {r['same_lang_top20']:.3f}",
            flush=True,
        )
    print("\nper-language R@1:\n" + " " * 40 + "".join(f"{x:>6}" for x in LAREQA_LANGUAGES))
    for name, r in results.items():
        row = "".join(f"{r['per_language'][x]['r@1']:6.2f}" for x in LAREQA_LANGUAGES)
        print(f"{name[:40]:40}{row}")
    check = xquad_check(args.samples / "xquad", embedder, corpus, args.engine)
    print("\nXQuAD R@5:")
    for name, table in check.items():
        print(f"{name:22}" + "".join(f"{lang} {t['r@5']:.3f}  " for lang, t in table.items()))
    report = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "model": embedder.model_id,
        "pool_sentences": len(pool.sentences),
        "questions": len(pool.questions),
        "corpus": {
            "digest": corpus_digest(),
            "languages": list(read_corpus()),
            "rank": int(corpus.basis.shape[0]),
        },
        "lareqa": results,
        "xquad_r@5": check,
        "seconds": round(time.perf_counter() - started, 1),
    }
    common.write_results(args.output, report)
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
