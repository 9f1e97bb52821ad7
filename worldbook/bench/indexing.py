"""Indexing throughput (docs/design/benchmarks.md): entries/s end to end through the queue
against the raw embedder, on the same texts in the same run.

* raw: ``embed_passages`` on exactly the texts the pipeline embeds, ``batch`` per call, one
  model instance using every core (mean of a run before and after the pipelines);
* engine, 1 worker: ``request_indexing`` → ``InProcessIndexQueue`` → ``index_entries`` →
  SQLite, until the book's indexed share is 1.0 (the same model instance as raw);
* engine, 2 workers: two queues, each with its own model instance on one core, the entries
  split between them (what two worker processes on a 2-core machine do, without a broker).

Entries are the English XQuAD paragraphs titled by article. The Celery-over-Redis rows are
measured by ``benchmarks/bench_indexing.py``, which needs a Redis database it may flush.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.queues import InProcessIndexQueue
from worldbook.adapters.store import SqlStore, open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.embed_text import MIN_PASSAGE_UNITS, passage_texts
from worldbook.ports import Embedder
from worldbook.service.indexing import index_entries, request_indexing

BATCH = 32


def xquad_drafts(xquad_dir: Path, n: int) -> list[EntryDraft]:
    """The first ``n`` English XQuAD paragraphs as entries titled "<article> <number>"."""
    data = json.loads((xquad_dir / "xquad.en.json").read_text(encoding="utf-8"))["data"]
    drafts = [
        EntryDraft(title=f"{article['title'].replace('_', ' ')} {i + 1}"[:100], lore=p["context"])
        for article in data
        for i, p in enumerate(article["paragraphs"])
    ]
    return drafts[:n]


def pipeline_texts(drafts: Sequence[EntryDraft], embedder: Embedder) -> list[str]:
    """Exactly the texts ``index_entries`` embeds for these drafts (entry text, chunked)."""
    max_units = max(MIN_PASSAGE_UNITS, embedder.max_passage_chars)
    return [text for d in drafts for text in passage_texts(d.title, d.aliases, d.lore, max_units)]


def raw_rate(embedder: Embedder, texts: list[str], entries: int, batch: int = BATCH) -> float:
    """Entries/s of bare ``embed_passages`` calls, ``batch`` texts per call."""
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed_passages(texts[i : i + batch])
    return entries / (time.perf_counter() - started)


def _new_book(store: SqlStore, drafts: Sequence[EntryDraft], title: str) -> tuple[str, list[str]]:
    book = store.create_book("bench", BookDraft(title=title))
    ids: list[str] = []
    for i in range(0, len(drafts), 500):
        ids += [e.id for e in store.add_entries(book.id, list(drafts[i : i + 500]))]
    return book.id, ids


def engine_rate(
    embedders: Sequence[Embedder], drafts: Sequence[EntryDraft], workdir: Path, name: str
) -> float:
    """Entries/s through ``len(embedders)`` in-process queues sharing the entries."""
    store = open_store(f"sqlite:///{workdir / f'{name}.db'}")
    book_id, ids = _new_book(store, drafts, name)
    model_id = embedders[0].model_id
    queues = [
        InProcessIndexQueue(
            lambda batch, e=e: index_entries(batch, store=store, embedder=e, batch_size=BATCH),  # type: ignore[misc]
            batch_size=BATCH,
        )
        for e in embedders
    ]
    for queue in queues:
        queue.start()
    try:
        started = time.perf_counter()
        share = -(-len(ids) // len(queues))
        for i, queue in enumerate(queues):
            request_indexing(store, queue, ids[i * share : (i + 1) * share], model_id)
        for queue in queues:
            queue.wait_idle()
        while store.book_index_share(book_id, model_id) < 1.0:
            time.sleep(0.01)
        elapsed = time.perf_counter() - started
    finally:
        for queue in queues:
            queue.stop()
        store.close()
    return len(ids) / elapsed


def run_indexing(
    xquad_dir: Path,
    spec: str,
    *,
    quick: bool,
    step: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    entries = 8 if quick else 120
    drafts = xquad_drafts(xquad_dir, entries)
    embedder = load_embedder(spec, threads=2)
    texts = pipeline_texts(drafts, embedder)
    step(f"indexing: raw {spec}")
    embedder.embed_passages(texts[:4])  # load the model before timing
    raw_before = raw_rate(embedder, texts, len(drafts))
    rows: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="wb-bench-indexing-") as tmp:
        step("indexing: engine, 1 worker")
        rows["engine-1-worker"] = engine_rate([embedder], drafts, Path(tmp), "one")
        step("indexing: engine, 2 workers")
        pair = [load_embedder(spec, threads=1) for _ in range(2)]
        for e in pair:
            e.embed_passages(texts[:2])
        rows["engine-2-workers"] = engine_rate(pair, drafts, Path(tmp), "two")
    raw_after = raw_rate(embedder, texts, len(drafts))
    raw = (raw_before + raw_after) / 2
    return {
        "embedder": spec,
        "model_id": embedder.model_id,
        "entries": len(drafts),
        "texts": len(texts),
        "batch_size": BATCH,
        "raw_before": round(raw_before, 2),
        "raw_after": round(raw_after, 2),
        "raw": round(raw, 2),
        "rows": {k: round(v, 2) for k, v in rows.items()},
        "vs_raw": {k: round(v / raw, 3) for k, v in rows.items()},
    }
