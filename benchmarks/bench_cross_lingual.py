"""LAReQA (XQuAD-R mAP@20) and XQuAD R@5 with the aligned view fused (ADR 0016).

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_cross_lingual.py \
        [--samples DIR] [--weight 1.0] [--output FILE]

Side by side in one run, nothing fitted on XQuAD or XQuAD-R:

* ``e5 (engine)`` — e5-small with the engine's language correction (queries projected, pool rows
  projected and centred per detected language), i.e. the engine before ADR 0016;
* ``use`` — USE multilingual v3 alone;
* ``fused`` — both, fused per question by :func:`worldbook.core.fusion.fuse` over each view's
  top ``TOP_K * WIDEN`` candidates, as a turn fuses them (candidates and questions in a language
  USE does not read keep e5's ranking).

XQuAD runs the engine path (chunked paragraphs in four books, ``FaissIndex``) through
:func:`worldbook.service.aligned_view.fused_search`. Vectors are memoised in
``benchmarks/.cache``. Writes ``benchmarks/results/cross_lingual.json``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.language_correction import LanguageCorrection, load_language_correction
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.lareqa import LAREQA_LANGUAGES, TOP_K, Ranking, evaluate, load_pool, rank_pool
from worldbook.bench.xquad import BOOKS, NOT_FOUND, XquadData, load_xquad, metrics
from worldbook.bench.xquad import paragraph_index as xquad_index
from worldbook.core.fusion import fuse, ranked
from worldbook.core.types import SemanticHit
from worldbook.ports import Embedder, Vectors
from worldbook.service.aligned_view import (
    USE_LANGUAGES,
    WIDEN,
    AlignedView,
    fused_search,
    text_language,
)
from worldbook.settings import WorldbookSettings

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()  # beside the checkout
CACHE = ROOT / "benchmarks" / ".cache"  # vectors kept between runs
RESULTS = ROOT / "benchmarks" / "results" / "cross_lingual.json"


def _top(scores: Vectors, n: int) -> np.ndarray:
    part = np.argpartition(-scores, n, axis=1)[:, :n]
    return part


def fused_ranking(
    e5: tuple[Vectors, Vectors],
    use: tuple[Vectors, Vectors],
    blind_rows: np.ndarray,
    blind_queries: np.ndarray,
    weight: float,
    batch: int = 256,
    cross: tuple[float, np.ndarray, np.ndarray] | None = None,
) -> Ranking:
    """Per question, the top ``TOP_K`` of the two views fused as a turn fuses them.
    ``cross``: (the aligned weight for a sentence in another language than the question, each
    sentence's language, each question's language), as a turn weighs them."""
    (qe, pe), (qu, pu) = e5, use
    pool = TOP_K * WIDEN
    blind = set(np.flatnonzero(blind_rows).tolist())
    tops: list[list[int]] = []
    for start in range(0, qe.shape[0], batch):
        se, su = qe[start : start + batch] @ pe.T, qu[start : start + batch] @ pu.T
        te, tu = _top(se, pool), _top(su, pool)
        for i in range(se.shape[0]):
            first = {int(j): float(se[i, j]) for j in te[i]}
            second = {} if blind_queries[start + i] else {int(j): float(su[i, j]) for j in tu[i]}
            weights = None
            if cross is not None:
                w, row_lang, q_lang = cross
                keys = set(first) | set(second)
                weights = {j: w for j in keys if row_lang[j] != q_lang[start + i]}
            fused = fuse(first, second, weight, blind, weights)
            best = ranked(dict(sorted(fused.items())), TOP_K)
            tops.append([key for key, _ in best])
    return Ranking(np.asarray(tops, dtype=np.int_))


def lareqa(
    folder: Path,
    e5: Embedder,
    use: Embedder,
    correction: LanguageCorrection,
    weight: float,
    cross_weight: float | None = None,
) -> dict[str, Any]:
    pool = load_pool(folder)
    languages = [text_language(s) for s in pool.sentences]
    pe = correction.rows(e5.embed_passages(pool.sentences), languages)
    qe = correction.queries(e5.embed_queries(pool.questions))
    pu, qu = use.embed_passages(pool.sentences), use.embed_queries(pool.questions)
    blind_rows = np.array([lang not in USE_LANGUAGES for lang in languages])
    blind_q = np.array([text_language(q) not in USE_LANGUAGES for q in pool.questions])
    out = {
        "e5 (engine)": evaluate(pool, rank_pool(qe, lambda qv, _r: qv @ pe.T)),
        "use": evaluate(pool, rank_pool(qu, lambda qv, _r: qv @ pu.T)),
        "fused": evaluate(pool, fused_ranking((qe, pe), (qu, pu), blind_rows, blind_q, weight)),
    }
    if cross_weight is not None:
        q_lang = np.array([text_language(q) for q in pool.questions])
        cross = (cross_weight, np.array(languages), q_lang)
        views = ((qe, pe), (qu, pu))
        ranking = fused_ranking(*views, blind_rows, blind_q, weight, cross=cross)
        out[f"fused, cross-language weight {cross_weight:g}"] = evaluate(pool, ranking)
    return {"pool_sentences": len(pool.sentences), "questions": len(pool.questions), **out}


def xquad(
    data: XquadData,
    e5: Embedder,
    use: Embedder,
    correction: LanguageCorrection,
    weight: float,
    cross_weight: float | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """R@5 per question language, the engine path with e5 alone and with the views fused."""
    paragraphs = [(i, data.book_of[i], c) for i, c in enumerate(data.paragraphs)]
    first, _ = xquad_index(paragraphs, e5, max_units=e5.max_passage_chars, correction=correction)
    second, _ = xquad_index(paragraphs, use, max_units=use.max_passage_chars)
    aligned = AlignedView(use, second, weight=weight)
    books = [f"book-{b}" for b in range(BOOKS)]
    k = len(data.paragraphs)

    def primary(texts: Sequence[str], book_ids: Sequence[str], n: int) -> list[SemanticHit]:
        return first.search(list(book_ids), e5.embed_queries(list(texts)), n)

    views: list[tuple[str, AlignedView | None]] = [("e5 (engine)", None), ("fused", aligned)]
    if cross_weight is not None:
        crossed = AlignedView(use, second, weight=weight, cross_weight=cross_weight)
        views.append((f"fused, cross-language weight {cross_weight:g}", crossed))
    english = {f"p{i}": "en" for i in range(len(data.paragraphs))}  # XQuAD's paragraphs

    def languages(_book: str) -> dict[str, str]:
        return english

    out: dict[str, dict[str, dict[str, float]]] = {name: {} for name, _ in views}
    for lang, qs in data.questions.items():
        e5.embed_queries([q for _, q in qs])  # one batch; the searches below hit the cache
        use.embed_queries([q for _, q in qs])
        for name, view in views:
            ranks = []
            for gold, question in qs:
                found = fused_search(primary, view, [question], books, k, languages=languages)
                hits = [h.entry_id for h in found]
                ranks.append(hits.index(f"p{gold}") + 1 if f"p{gold}" in hits else NOT_FOUND)
            out[name][lang] = metrics(ranks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--weight", type=float, default=WorldbookSettings().aligned_weight)
    parser.add_argument(
        "--cross-weight",
        type=float,
        default=WorldbookSettings().aligned_cross_weight,
        help="also score the aligned weight for another language than the question's",
    )
    parser.add_argument("--quick", action="store_true", help="XQuAD's seeded subset only")
    parser.add_argument("--no-lareqa", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.perf_counter()
    cache = CACHE
    e5 = CachedEmbedder(load_embedder("e5-small", threads=1), cache)
    use = CachedEmbedder(load_embedder("use-m3", threads=1), cache)
    shrink = WorldbookSettings().language_centring_shrink
    correction = load_language_correction(e5.model_id, shrink=shrink)
    assert correction is not None, "e5-small ships a language basis"
    report: dict[str, Any] = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "models": [e5.model_id, use.model_id],
        "aligned_weight": args.weight,
        "aligned_cross_weight": args.cross_weight,
    }
    if not args.no_lareqa:
        found = lareqa(
            args.samples / "xquad-r", e5, use, correction, args.weight, args.cross_weight
        )
        report["lareqa"] = found
        for name, r in found.items():
            if not isinstance(r, dict):
                continue
            print(f"LAReQA {name:12} mAP@20 {r['map@20']:.4f}  R@1 {r['r@1']:.4f}", flush=True)
    data = load_xquad(args.samples / "xquad", quick=args.quick)
    report["xquad"] = xquad(data, e5, use, correction, args.weight, args.cross_weight)
    for name, table in report["xquad"].items():
        mean = np.mean([t["r@5"] for lang, t in table.items() if lang != "en"])
        report.setdefault("xquad_r@5_mean_non_english", {})[name] = round(float(mean), 4)
        print(
            f"XQuAD {name:12} R@5 mean non-English {mean:.4f}  "
            + "  ".join(f"{lang} {t['r@5']:.3f}" for lang, t in table.items()),
            flush=True,
        )
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["lareqa_languages"] = list(LAREQA_LANGUAGES)
    common.write_results(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
