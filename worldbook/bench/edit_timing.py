"""What the two "first turn after an edit" benchmarks share (``benchmarks/bench_edit.py`` for
world books, ``benchmarks/bench_classic_edit.py`` for classic books): one served process over a
stored book and the moves they time (:class:`ServedBook`); each variant's samples are (wall
seconds, turn-thread CPU seconds); rows of p50/p90/max with the ratio to the warm turn, a
printed table, and the results file with machine, versions, date and load average."""

from __future__ import annotations

import cProfile
import gc
import os
import random
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.core.types import ModelProfile
from worldbook.ports import Embedder, Store
from worldbook.service import library
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.turns import preview
from worldbook.settings import WorldbookSettings

Samples = dict[str, list[tuple[float, float]]]
"""Per variant, one (wall seconds, CPU seconds of the turn's thread) pair per turn."""

TARGET_MS = 50.0  # ADR 0008: the first turn after an edit, p50
PROFILE = ModelProfile(input_window=32_000, tokenizer_id="cl100k_base")


class ServedBook:
    """One served process (``Components``, as ``worldbook serve`` wires it) over a stored book,
    and the moves a round times. A subclass stores the book (``book_id``, ``entry_ids``) and
    says what a turn's message is."""

    def __init__(self, settings: WorldbookSettings, store: Store, embedder: Embedder) -> None:
        self.settings, self.store, self.embedder = settings, store, embedder
        self.parts = self.components()
        self.rng = random.Random(7)
        self.profiler: cProfile.Profile | None = None
        self.book_id = ""
        self.entry_ids: list[str] = []

    def components(self) -> Components:
        return Components(
            self.settings, store=self.store, embedder=self.embedder, start_queue=False
        )

    def message(self) -> str:
        """A new message for the next turn."""
        raise NotImplementedError

    def turn(self, parts: Components, profiled: bool = False) -> tuple[float, float]:
        """Seconds for one turn with a new message: wall time, and the CPU time of the turn's
        thread (what the turn itself computed, apart from waiting for the GIL or for a core on
        a shared machine)."""
        message = self.message()
        profiler = self.profiler if profiled else None
        started, cpu = time.perf_counter(), time.thread_time()
        if profiler is not None:
            profiler.enable()
        preview(
            parts.services,
            user_id="bench",
            source=BookSource(book_ids=(self.book_id,)),
            message=message,
            profile=PROFILE,
        )
        if profiler is not None:
            profiler.disable()
        return time.perf_counter() - started, time.thread_time() - cpu

    def edit(self, names: str) -> str:
        """Change one entry's lore and the last of its ``names`` (aliases or keys) through the
        service; the entry's id."""
        entry_id = self.rng.choice(self.entry_ids)
        entry = self.store.get_entry(entry_id)
        renamed = [*getattr(entry, names)[:-1], f"Newname{self.rng.randrange(10**6)}"]
        changes = {"lore": entry.lore + " The ford is closed.", names: renamed}
        library.update_entry(self.parts.services, "bench", entry_id, changes)
        return entry_id

    def cold(self) -> tuple[float, float]:
        """The first turn of a process that has never seen the book."""
        fresh = self.components()
        try:
            return self.turn(fresh)
        finally:
            fresh.close()
            # The fresh process's objects are garbage now: collect them off the clock, or the
            # pause lands on whichever timed turn of another variant comes next.
            del fresh
            gc.collect()


def row(samples_s: list[tuple[float, float]], warm: Mapping[str, float]) -> dict[str, float]:
    """p50/p90/max wall and p50 CPU of one variant, with their ratios to the warm turn's."""
    ms = sorted(wall * 1000 for wall, _ in samples_s)
    cpu_p50 = statistics.median(cpu * 1000 for _, cpu in samples_s)
    p50 = statistics.median(ms)
    return {
        "p50_ms": round(p50, 2),
        "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2),
        "max_ms": round(ms[-1], 2),
        "ratio_to_warm_p50": round(p50 / warm.get("p50_ms", p50), 2),
        "cpu_p50_ms": round(cpu_p50, 2),
        "cpu_ratio_to_warm": round(cpu_p50 / warm.get("cpu_p50_ms", cpu_p50), 2),
    }


def rows(samples: Samples) -> dict[str, dict[str, float]]:
    """One row per variant, in the samples' order; the ``warm`` variant is the baseline."""
    warm = row(samples["warm"], {})
    return {name: row(taken, warm) for name, taken in samples.items()}


def report(
    name: str,
    title: str,
    table: dict[str, dict[str, float]],
    judged: tuple[str, ...],
    parameters: dict[str, Any],
    path: Path,
) -> None:
    """Print the table and whether the variants in ``judged`` meet the target, and write the
    results file."""
    load = os.getloadavg()[0]
    print(title)
    print(f"load average at the end: {load:.1f} (the machine is shared)")
    width = max(len(variant) for variant in table) + 2
    head = ("variant", "p50 ms", "p90 ms", "max ms", "x warm", "CPU p50", "x warm")
    print(f"{head[0]:<{width}}" + "".join(f"{h:>9}" for h in head[1:]))
    cells = ("p50_ms", "p90_ms", "max_ms", "ratio_to_warm_p50", "cpu_p50_ms", "cpu_ratio_to_warm")
    for variant, values in table.items():
        print(f"{variant:<{width}}" + "".join(f"{values[c]:>9}" for c in cells))
    met = all(table[v]["p50_ms"] <= TARGET_MS for v in judged)
    print(
        f"target (first turn after an edit <= {TARGET_MS:g} ms, p50): {'met' if met else 'NOT met'}"
    )
    write_results(
        path,
        {
            "benchmark": name,
            "date": now_iso(),
            "machine": machine(),
            "versions": versions(),
            "load_average": round(load, 2),
            "parameters": parameters,
            "results": table,
            "target_first_turn_after_edit_50ms_met": met,
        },
    )
    print(f"wrote {path}")
