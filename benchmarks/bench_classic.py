"""Classic keyword engine latency (docs/design/classic-engine.md): classic p50/p99 per turn against
the SillyTavern-style per-key regex scan, on one core, for books of 100 / 500 / 2,000 entries with
10 keys each, scan depth 10, recursion on (3 passes), budget 2,000 tokens.

What is measured and how: ``worldbook/bench/classic_latency.py``. The last row is a stress case
(keys shared by many entries, hundreds of activations per turn). Target: classic p50 ≤ 3 ms at
2,000 entries and ≥ 20× faster than the scan in the same run.

Writes ``benchmarks/results/classic.json``.
Run: ``.venv/bin/python benchmarks/bench_classic.py`` (``--turns``, ``--baseline-turns`` to
shorten: the scan takes seconds per turn at 2,000 entries).
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from worldbook.bench.classic_latency import SIZES, classic_rows  # noqa: E402
from worldbook.bench.common import machine, now_iso, versions, write_results  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "classic.json"
TARGET_P50_MS = 3.0
TARGET_RATIO = 20.0


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'entries':>8} {'keys':>7} {'shared':>6} {'activ.':>6} {'compile ms':>10} "
        f"{'classic p50':>11} {'p99':>8} {'scan p50':>10} {'p99':>10} {'ratio':>8}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        c, b = r["classic_ms"], r["baseline_ms"]
        lines.append(
            f"{r['entries']:>8} {r['keys']:>7} {'yes' if r['keys_shared'] else 'no':>6} "
            f"{r['activations_mean']:>6} {r['compile_ms']:>10} {c['p50']:>11.3f} {c['p99']:>8.3f} "
            f"{b['p50']:>10.1f} {b['p99']:>10.1f} {r['ratio_p50']:>7}x"
        )
    return "\n".join(lines)


def verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    main = [r for r in rows if not r["keys_shared"]]
    largest = max(main, key=lambda r: r["entries"])
    return {
        "entries": largest["entries"],
        "p50_ms": largest["classic_ms"]["p50"],
        "p50_target_ms": TARGET_P50_MS,
        "p50_met": largest["classic_ms"]["p50"] <= TARGET_P50_MS,
        "ratio": largest["ratio_p50"],
        "ratio_target": TARGET_RATIO,
        "ratio_met": largest["ratio_p50"] >= TARGET_RATIO,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--baseline-turns", type=int, default=10)
    parser.add_argument("--stress-baseline-turns", type=int, default=2, help="0: no stress row")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    measured = classic_rows(
        tuple(args.sizes), args.turns, args.baseline_turns, args.stress_baseline_turns
    )
    rows = measured["rows"]
    print(table(rows))
    outcome = verdict(rows)
    print(
        f"\n{outcome['entries']} entries: classic p50 {outcome['p50_ms']:.3f} ms "
        f"(target ≤ {TARGET_P50_MS} ms: {'met' if outcome['p50_met'] else 'NOT met'}), "
        f"{outcome['ratio']}x the scan (target ≥ {TARGET_RATIO}x: "
        f"{'met' if outcome['ratio_met'] else 'NOT met'})"
    )
    write_results(
        args.out,
        {
            "suite": "classic latency (issue 11 item 7)",
            "date": now_iso(),
            "machine": machine(),
            "versions": versions((*versions().keys(), "regex")),
            "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "setup": measured["setup"],
            "rows": rows,
            "verdict": outcome,
        },
    )
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
