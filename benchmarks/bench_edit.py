"""The first turn after an edit (ADR 0008: "no turn pays for an edit").

A 2,000-entry book with 50 aliases per entry (100,000 aliases) is stored in SQLite with a
vector per entry and served by the real composition root (``Components``: background matcher
and FAISS refresh, as ``worldbook serve`` wires them). Then, for each of ``--edits`` rounds,
interleaved so the machine's noise hits every variant alike:

- ``warm``: a turn with a new message and nothing edited (the baseline);
- ``after lore edit``: one entry's lore and one alias changed through the service, then the
  first turn (the literal matcher and the book view must follow the edit; the entry's vectors
  are now of an older text, so it may not rank by meaning);
- ``during the rebuild``: a turn while the process builds the edited book's full automaton
  in the background (it shares the GIL with the build);
- ``after re-embedding``: the edited entry gets a new vector (what the indexer does), then the
  first turn (the book's vector index changed);
- ``after the new index lands``: the first turn once the background build of the book's new
  vector index is done (the book view takes the new index's flags);
- ``cold``: the first turn of a process that has never seen the book (a fresh
  ``Components``): what a turn paid when every edit meant a rebuild on the turn path.

Between rounds the background builds are waited for, so each edit starts from a settled
process. The query embedder is the fake one by default (the edit is what is measured;
``--embedder e5-small`` adds the real query embedding to every variant alike). Prints p50/p90
per variant with the ratio to ``warm`` and writes ``benchmarks/results/edit.json``.

    .venv/bin/python benchmarks/bench_edit.py [--entries 2000] [--aliases 50] [--edits 15]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.store import open_store
from worldbook.bench import edit_timing
from worldbook.bench.edit_timing import Samples
from worldbook.bench.latency import _indexed_book
from worldbook.bench.synthetic import synthetic_drafts
from worldbook.ports import Embedder
from worldbook.runtime.background import AFTER_THE_TURN_S
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "edit.json"
VARIANTS = (
    "warm",
    "after lore edit",
    "during the rebuild",
    "after re-embedding",
    "after the new index lands",
    "cold",
)


class Bench(edit_timing.ServedBook):
    """A world book with a vector per entry; turns name no entry in particular."""

    def build(self, entries: int, aliases: int) -> None:
        drafts = synthetic_drafts(random.Random(entries), entries, aliases)
        self.book_id = _indexed_book(self.parts.services, drafts, seed=3)
        self.entry_ids = [e.id for e in self.store.list_entries(self.book_id)]
        self.turn(self.parts)  # the book's first turn builds every cache once

    def message(self) -> str:
        return f"We ride on toward the {self.rng.randrange(10**9)} hills at dawn."

    def reembed(self, entry_id: str) -> None:
        services = self.parts.services
        entry = self.store.get_entry(entry_id)
        vector = np.random.default_rng(len(entry.lore)).standard_normal(services.embedder.dim)
        unit = (vector / np.linalg.norm(vector)).astype(np.float32)
        self.store.save_vectors(entry_id, services.model_id, entry.content_hash, unit)
        services.invalidate_books({self.book_id})

    def settle(self) -> None:
        services = self.parts.services
        services.matcher_cache.wait_idle(60)
        if isinstance(services.vector_index, FaissIndex):
            services.vector_index.wait_idle(60)


def run(entries: int, aliases: int, edits: int, embedder: Embedder) -> Samples:
    samples: Samples = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="wb-bench-edit-") as tmp:
        settings = WorldbookSettings(data_dir=Path(tmp), embedder="fake", broker_url=None)
        store = open_store(f"sqlite:///{Path(tmp) / 'edit.db'}")
        bench = Bench(settings, store, embedder)
        try:
            bench.build(entries, aliases)
            steps: dict[str, Callable[[], tuple[float, float]]] = {
                "warm": lambda: bench.turn(bench.parts),
                "cold": bench.cold,
            }
            for _ in range(edits):
                for name, step in steps.items():
                    samples[name].append(step())
                edited = bench.edit("aliases")
                samples["after lore edit"].append(bench.turn(bench.parts))
                time.sleep(AFTER_THE_TURN_S + 0.05)  # the full automaton is being built now
                samples["during the rebuild"].append(bench.turn(bench.parts))
                bench.settle()
                bench.reembed(edited)
                samples["after re-embedding"].append(bench.turn(bench.parts))
                bench.settle()
                samples["after the new index lands"].append(bench.turn(bench.parts))
        finally:
            bench.parts.close()
            store.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--aliases", type=int, default=50)
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--embedder", choices=("fake", "e5-small"), default="fake")
    args = parser.parse_args()
    embedder: Embedder = HashingEmbedder()
    if args.embedder != "fake":
        from worldbook.adapters.embedders.registry import load_embedder

        embedder = load_embedder(args.embedder, threads=1)
    samples = run(args.entries, args.aliases, args.edits, embedder)
    edit_timing.report(
        "bench_edit",
        f"{args.entries} entries x {args.aliases} aliases, {args.edits} edits, SQLite",
        edit_timing.rows(samples),
        VARIANTS[1:5],
        {**vars(args), "store": "SQLite", "profile": "32k, cl100k_base"},
        RESULTS,
    )


if __name__ == "__main__":
    main()
