"""The constraints of ADR 0003 and 0013 and the language correction as shipped, in one run.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_retrieval.py \
        [--samples ../shared/samples] [--turns 300]

* XQuAD R@5 / R@1 / MRR per language through the engine path (``FaissIndex``), without and
  with the shipped language correction (ADR 0003: no language may lose more than 0.005).
* XQuAD conversations (``benchmarks/bench_xquad.py`` scenarios: drift, follow-up) under the
  former (0.45) and the new (0.8) recency decay, with the correction.
* LAReQA mAP@20 on the XQuAD-R mixed pool (11 languages) with the correction exactly as the
  engine applies it (``LanguageCorrection.queries`` / ``.rows`` with detected languages): the
  ADR 0003 target is 0.45.
* Latency A/B in one run, interleaved: the selection core (``select``) under the rules before
  and after the hard sets, on the hard-set turns (Saltreach book) and on the 2,000-entry ×
  50-alias synthetic book of ``benchmarks/bench_selection.py``; the FAISS search of 6 messages
  over a 2,000-row book with and without the correction; building a book index with and
  without the correction (language guesses cold and cached).

Nothing is fit on XQuAD or XQuAD-R. Vectors come from ``benchmarks/.cache`` (no re-embedding
when the other benchmarks ran). Writes ``benchmarks/results/retrieval.json``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from worldbook.adapters.embedders import load_embedder  # noqa: E402
from worldbook.adapters.faiss_index import FaissIndex  # noqa: E402
from worldbook.adapters.language_correction import (  # noqa: E402
    LanguageCorrection,
    load_language_correction,
)
from worldbook.adapters.tokenizers import get_tokenizer  # noqa: E402
from worldbook.bench import common  # noqa: E402
from worldbook.bench.common import CachedEmbedder  # noqa: E402
from worldbook.bench.hard_set import BEFORE_ISSUE_16, load_hard_set  # noqa: E402
from worldbook.bench.lareqa import LAREQA_LANGUAGES, evaluate, load_pool, rank_pool  # noqa: E402
from worldbook.bench.xquad import BOOKS, LANGUAGES, engine_method, load_xquad  # noqa: E402
from worldbook.core.language_id import detect_language  # noqa: E402
from worldbook.core.query import Method, QueryCombination  # noqa: E402
from worldbook.core.selection import select  # noqa: E402
from worldbook.core.types import SelectionRules, SemanticHit, Turn  # noqa: E402
from worldbook.ports import Embedder  # noqa: E402
from worldbook.runtime.matcher_cache import MatcherCache  # noqa: E402
from worldbook.settings import WorldbookSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()  # beside the checkout
CACHE = ROOT / "benchmarks" / ".cache"  # vectors kept between runs
RESULTS = ROOT / "benchmarks" / "results" / "retrieval.json"
SETTINGS = WorldbookSettings()
BEFORE_RULES = SETTINGS.model_copy(update=BEFORE_ISSUE_16).selection_rules()
AFTER_RULES = SETTINGS.selection_rules()


def _script(name: str) -> Any:
    """Another benchmark script of this folder, imported as a module (its helpers reused)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def xquad_engine(folder: Path, embedder: Embedder, corr: LanguageCorrection) -> dict[str, Any]:
    data = load_xquad(folder, quick=False)
    raw = engine_method(data, embedder)
    fixed = engine_method(data, embedder, corr)
    delta = {lang: round(fixed[lang]["r@5"] - raw[lang]["r@5"], 4) for lang in LANGUAGES}
    return {
        "engine": raw,
        "engine+correction": fixed,
        "r@5_delta": delta,
        "worst_r@5_delta": min(delta.values()),
        "meets_-0.005": min(delta.values()) >= -0.005,
    }


def xquad_conversations(
    folder: Path, embedder: Embedder, corr: LanguageCorrection
) -> dict[str, Any]:
    """bench_xquad.py's conversation scenarios, decay 0.45 vs 0.8, with the correction."""
    bx = _script("bench_xquad")
    bx.XQUAD = folder
    data = bx.load_data(quick=False)
    books = [f"book-{b}" for b in range(BOOKS)]
    out: dict[str, Any] = {}
    for decay in (0.45, 0.8):
        combo = QueryCombination(Method.CENTRED_RECENCY_MAX, decay)
        index = bx.paragraph_index(
            [(i, data.book_of[i], data.paragraphs[i]) for i in data.pool],
            embedder,
            max_units=embedder.max_passage_chars,
            combination=combo,
            correction=corr,
        )[0]
        for scenario in ("drift", "follow-up"):
            found: dict[str, float] = {}
            for lang, qs in data.questions.items():
                rng = random.Random(f"{lang}-{scenario}")
                q_vectors = embedder.embed_queries([q for _, q in qs])
                follow = embedder.embed_queries([bx.FOLLOW_UP[lang]])[0]
                hits = 0
                chosen = rng.sample(range(len(qs)), min(150, len(qs)))
                for i in chosen:
                    queries = bx.conversation(scenario, qs, q_vectors, follow, i, rng)
                    top = [h.entry_id for h in index.search(books, queries, k=5)]
                    hits += f"p{qs[i][0]}" in top
                found[lang] = round(hits / len(chosen), 4)
            found["mean"] = round(float(np.mean(list(found.values()))), 4)
            out[f"{scenario} decay {decay}"] = found
    return out


def lareqa(folder: Path, embedder: Embedder, corr: LanguageCorrection) -> dict[str, Any]:
    pool = load_pool(folder)
    p = embedder.embed_passages(pool.sentences)
    q = embedder.embed_queries(pool.questions)
    rows = corr.rows(p, [detect_language(s) for s in pool.sentences])
    out: dict[str, Any] = {}
    for name, (queries, cands) in {
        "raw": (q, p),
        "engine correction": (corr.queries(q), rows),
    }.items():

        def scorer(qv: np.ndarray, _rows: np.ndarray, c: np.ndarray = cands) -> np.ndarray:
            return np.asarray(qv @ c.T, dtype=np.float32)

        r: dict[str, Any] = evaluate(pool, rank_pool(queries, scorer))
        out[name] = {
            "map@20": r["map@20"],
            "r@1": r["r@1"],
            "worst_language_r@1": min(v["r@1"] for v in r["per_language"].values()),
            "same_lang_top20": r["same_lang_top20"],
            "per_language_r@1": {x: r["per_language"][x]["r@1"] for x in LAREQA_LANGUAGES},
        }
    return out


def _interleaved(fns: dict[str, Callable[[], object]], repeats: int) -> dict[str, Any]:
    """p50/p99 of each function, run alternately so machine load hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return {name: common.percentiles(s) for name, s in samples.items()}


def selection_latency(turns: list[Turn], repeats: int) -> dict[str, Any]:
    """The selection core per turn, rules before vs after the hard sets (warm caches; each turn
    timed under both rule sets back to back)."""
    tokenizer = get_tokenizer("cl100k_base")
    caches = {"before": MatcherCache(), "after": MatcherCache()}
    rules = {"before": BEFORE_RULES, "after": AFTER_RULES}
    samples: dict[str, list[float]] = {"before": [], "after": []}
    for which in rules:  # warm: cuts and index lines are cached per book version
        for t in turns:
            select(t, rules[which], tokenizer, matcher_cache=caches[which])
    for r in range(repeats):
        for t in turns:
            for which in ("before", "after") if r % 2 else ("after", "before"):
                t0 = time.perf_counter()
                select(t, rules[which], tokenizer, matcher_cache=caches[which])
                samples[which].append(time.perf_counter() - t0)
    found: dict[str, Any] = {w: common.percentiles(s) for w, s in samples.items()}
    found["p50_delta_ms"] = round(found["after"]["p50"] - found["before"]["p50"], 4)
    return {"turns": len(turns), **found}


def hard_set_turns(embedder: Embedder) -> list[Turn]:
    """The Saltreach turns with their real semantic hits, as the service would pass them."""
    from worldbook.bench.hard_set import OWNER
    from worldbook.bench.quality import _components, _import_all
    from worldbook.core.turn_request import BookSource, TurnRequest
    from worldbook.core.types import ModelProfile
    from worldbook.service.turn_books import meaning_search, world_views

    hard = load_hard_set(ROOT / "benchmarks" / "hard_set" / "saltreach")
    profile = ModelProfile(8192, "cl100k_base")
    import tempfile

    from worldbook.service.cast import resolve_books

    with tempfile.TemporaryDirectory() as tmp:
        parts = _components(SETTINGS, embedder, Path(tmp))
        try:
            book_id = _import_all(parts.services, [hard.world])[hard.world.name]
            records, _ = resolve_books(parts.services, OWNER, BookSource(book_ids=(book_id,)))
            books = world_views(parts.services, records, profile.tokenizer_id)
            turns = []
            for t in hard.turns:
                request = TurnRequest(OWNER, BookSource(book_ids=(book_id,)), profile, t.messages)
                hits = meaning_search(parts.services, request, [])((book_id,))
                turns.append(Turn(tuple(books), t.messages, profile, hits))
        finally:
            parts.close()
    return turns


def synthetic_turns(count: int) -> list[Turn]:
    """bench_selection.py's 2,000-entry × 50-alias book and conversation windows."""
    bs = _script("bench_selection")
    from worldbook.core.types import ModelProfile
    from worldbook.testing import HashingEmbedder

    rng = random.Random(20261202)
    tokenizer = get_tokenizer("cl100k_base")
    book = bs.build_book(rng, tokenizer.count, 2000, 50)
    conversation = bs.build_conversation(rng, book, count * 2 + 8)
    profile = ModelProfile(128_000, tokenizer_id="cl100k_base", supports_tools=True)
    embedder = HashingEmbedder()
    passages = embedder.embed_passages([f"{e.title}. {e.lore[:300]}" for e in book.entries])
    queries = embedder.embed_queries([m.content for m in conversation])
    ends = [i for i in range(6, len(conversation)) if conversation[i - 1].role == "user"][:count]
    turns = []
    for end in ends:
        scores = (queries[end - 6 : end] @ passages.T).mean(axis=0)
        top = np.argsort(-scores, kind="stable")[:32]
        hits = tuple(SemanticHit("big", f"e{i}", float(scores[i])) for i in top)
        turns.append(Turn((book,), tuple(conversation[end - 6 : end]), profile, hits))
    return turns


def correction_cost(corr: LanguageCorrection, repeats: int) -> dict[str, Any]:
    """FAISS search (6 messages, 2,000 rows) with and without the correction, and the index
    build (projection + centring; the language guesses are the service's, cached by hash)."""
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((2000, corr.dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    ids = [f"e{i}" for i in range(2000)]
    langs = {i: ("en" if n % 10 else "fr") for n, i in enumerate(ids)}
    queries = rng.standard_normal((6, corr.dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    plain = FaissIndex(lambda _: (ids, rows))
    fixed = FaissIndex(lambda _: (ids, rows), correction=corr, languages=lambda _: langs)
    plain.search(["b"], queries, 20)
    fixed.search(["b"], queries, 20)
    search = _interleaved(
        {
            "search": lambda: plain.search(["b"], queries, 20),
            "search+correction": lambda: fixed.search(["b"], queries, 20),
        },
        repeats,
    )
    build = _interleaved(
        {
            "build": lambda: FaissIndex(lambda _: (ids, rows)).search(["b"], queries, 20),
            "build+correction": lambda: FaissIndex(
                lambda _: (ids, rows), correction=corr, languages=lambda _: langs
            ).search(["b"], queries, 20),
        },
        max(5, repeats // 20),
    )
    lore = "The harbour of the town is old and busy, and the lectors keep the lamps. " * 8
    texts = [f"Entry {i}\n{lore}" for i in range(200)]
    t0 = time.perf_counter()
    for text in texts:
        detect_language(text)
    guess_ms = (time.perf_counter() - t0) / len(texts) * 1000
    return {"search_ms": search, "build_ms": build, "language_guess_ms_per_entry": guess_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    started = time.perf_counter()
    inner = load_embedder("e5-small", threads=1)
    embedder = CachedEmbedder(inner, CACHE)
    corr = load_language_correction(inner.model_id, shrink=SETTINGS.language_centring_shrink)
    assert corr is not None, "e5-small ships a language basis"
    report: dict[str, Any] = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "model": inner.model_id,
        "correction_version": corr.version,
        "rules_before": vars_of(BEFORE_RULES),
        "rules_after": vars_of(AFTER_RULES),
    }
    report["latency"] = {
        "selection_hard_set": selection_latency(hard_set_turns(embedder), 20),
        "selection_2000_entries": selection_latency(synthetic_turns(args.turns), 3),
        "correction": correction_cost(corr, args.repeats),
    }
    print(report["latency"], flush=True)
    report["xquad"] = xquad_engine(args.samples / "xquad", embedder, corr)
    print("XQuAD R@5 delta", report["xquad"]["r@5_delta"], flush=True)
    report["xquad_conversations"] = xquad_conversations(args.samples / "xquad", embedder, corr)
    print("conversations", report["xquad_conversations"], flush=True)
    report["lareqa"] = lareqa(args.samples / "xquad-r", embedder, corr)
    print({k: v["map@20"] for k, v in report["lareqa"].items()}, flush=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    common.write_results(args.output, report)
    print(f"wrote {args.output}")


def vars_of(rules: SelectionRules) -> dict[str, Any]:
    return {k: getattr(rules, k) for k in rules.__dataclass_fields__}


if __name__ == "__main__":
    main()
