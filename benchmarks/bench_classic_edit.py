"""The first turn after an edit of a classic (keyword) book (ADR 0008).

A 2,000-entry classic book with 10 keys per entry (``worldbook.bench.classic_latency``'s
curated keys: 20,000 keys, none shared; scan depth 10, recursion on) is stored in SQLite and
served by the real composition root (``Components``, as ``worldbook serve`` wires it). Then,
for each of ``--edits`` rounds, interleaved so the machine's noise hits every variant alike:

- ``warm``: a turn with a new message and nothing edited (the baseline);
- ``after edit``: one entry's content and one of its keys changed through the service, then
  the first turn (the classic book and its compiled matcher must follow the edit);
- ``cold``: the first turn of a process that has never seen the book (a fresh
  ``Components``): what a turn paid when every edit meant a rebuild on the turn path.

Prints p50/p90 per variant (wall time and the turn thread's CPU time) with the ratio to
``warm`` and writes ``benchmarks/results/classic_edit.json``. ``--profile`` prints the
cProfile (thread CPU time) of the after-edit turns instead.

    .venv/bin/python benchmarks/bench_classic_edit.py [--entries 2000] [--edits 15]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from worldbook.adapters.store import open_store
from worldbook.bench import edit_timing
from worldbook.bench.classic_latency import SCAN_DEPTH, classic_drafts
from worldbook.bench.edit_timing import Samples
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import BookMode
from worldbook.service import library
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "classic_edit.json"
VARIANTS = ("warm", "after edit", "cold")
BOOK_SETTINGS = {"scan_depth": SCAN_DEPTH, "recursive_scanning": True, "token_budget": 2000}


class Bench(edit_timing.ServedBook):
    """A classic book; each turn names one of its keys."""

    def build(self, entries: int) -> None:
        drafts = [_keyed(d) for d in classic_drafts(random.Random(entries), entries)]
        draft = BookDraft(title="Classic", mode=BookMode.CLASSIC, settings=BOOK_SETTINGS)
        book = library.create_book(self.parts.services, "bench", draft)
        for start in range(0, len(drafts), 500):
            self.store.add_entries(book.id, drafts[start : start + 500])
        self.book_id = book.id
        self.entry_ids = [e.id for e in self.store.list_entries(self.book_id)]
        self.keys = [k for d in drafts for k in d.keys]
        self.turn(self.parts)  # the book's first turn builds every cache once

    def message(self) -> str:
        key = self.rng.choice(self.keys)
        return f"We ride on toward {key} and the {self.rng.randrange(10**9)} hills."


def _keyed(draft: EntryDraft) -> EntryDraft:
    """A classic entry: the draft's title and aliases are its keys."""
    return EntryDraft(title=draft.title, lore=draft.lore, keys=[draft.title, *draft.aliases])


def run(entries: int, edits: int, profile: bool) -> Samples:
    samples: Samples = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="wb-bench-classic-edit-") as tmp:
        settings = WorldbookSettings(data_dir=Path(tmp), embedder="fake", broker_url=None)
        store = open_store(f"sqlite:///{Path(tmp) / 'classic_edit.db'}")
        bench = Bench(settings, store, HashingEmbedder())
        if profile:
            bench.profiler = cProfile.Profile(time.thread_time)
        try:
            bench.build(entries)
            steps: dict[str, Callable[[], tuple[float, float]]] = {
                "warm": lambda: bench.turn(bench.parts),
                "cold": bench.cold,
            }
            for _ in range(edits):
                for name, step in steps.items():
                    if not profile:
                        samples[name].append(step())
                bench.edit("keys")
                samples["after edit"].append(bench.turn(bench.parts, profiled=profile))
        finally:
            bench.parts.close()
            store.close()
    if bench.profiler is not None:
        pstats.Stats(bench.profiler).sort_stats(os.environ.get("SORT", "cumulative")).print_stats(
            45
        )
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--edits", type=int, default=15)
    parser.add_argument("--profile", action="store_true", help="cProfile the after-edit turns")
    args = parser.parse_args()
    samples = run(args.entries, args.edits, args.profile)
    if args.profile:
        return
    edit_timing.report(
        "bench_classic_edit",
        f"{args.entries} entries x 10 keys (classic), {args.edits} edits, SQLite",
        edit_timing.rows(samples),
        ("after edit",),
        {**vars(args), "store": "SQLite", "profile": "32k, cl100k_base"},
        RESULTS,
    )


if __name__ == "__main__":
    main()
