"""What the two "first turn after an edit" benchmarks share (``benchmarks/bench_edit.py`` for
world books, ``benchmarks/bench_classic_edit.py`` for classic books): each variant's samples
are (wall seconds, turn-thread CPU seconds); rows of p50/p90/max with the ratio to the warm turn,
a printed table, and the results file with machine, versions, date and load average."""

from __future__ import annotations

import os
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from worldbook.bench.common import machine, now_iso, versions, write_results

Samples = dict[str, list[tuple[float, float]]]
"""Per variant, one (wall seconds, CPU seconds of the turn's thread) pair per turn."""

TARGET_MS = 50.0  # issue 13: the first turn after an edit, p50


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
