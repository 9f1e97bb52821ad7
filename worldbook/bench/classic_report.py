"""The classic engine's part of the bench report (docs/design/benchmarks.md): the latency table
beside the SillyTavern-style per-key regex scan, and its targets."""

from __future__ import annotations

from typing import Any

CLASSIC_P50_MS = 3.0  # docs/design/classic-engine.md: a 2,000-entry turn, one core
CLASSIC_RATIO = 20.0  # … at least 20× faster than the per-key regex scan, same run


def _f(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:,.{digits}f}"


def _big(classic: dict[str, Any]) -> dict[str, Any] | None:
    rows = [r for r in classic.get("rows", []) if not r.get("keys_shared")]
    return max(rows, key=lambda r: r["entries"], default=None)


def classic_targets(classic: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Target rows for the largest curated book of the run."""
    big = _big(classic or {})
    if big is None:
        return []
    p50 = big["classic_ms"]["p50"]
    name = f"classic turn p50 ({big['entries']:,} entries), ms"
    return [
        {
            "target": name,
            "value": p50,
            "goal": f"<= {CLASSIC_P50_MS:g}",
            "met": p50 <= CLASSIC_P50_MS,
        },
        {
            "target": f"per-key regex scan / classic, p50 ({big['entries']:,} entries)",
            "value": big["ratio_p50"],
            "goal": f">= {CLASSIC_RATIO:g}x",
            "met": big["ratio_p50"] >= CLASSIC_RATIO,
        },
    ]


def classic_md(classic: dict[str, Any] | None) -> list[str]:
    """The classic latency table (markdown lines), or nothing when the suite did not run."""
    if not classic or not classic.get("rows"):
        return []
    setup = classic["setup"]
    lines = [
        "",
        "### Classic keyword engine (one core)",
        "",
        f"Synthetic classic books, {setup['keys_per_entry']} keys per entry, scan depth "
        f"{setup['scan_depth']}, recursion on ({setup['recursion_passes']} passes), budget "
        f"{setup['budget']:,} tokens, {setup['messages_per_turn']} messages per turn, "
        f"{setup['turns']} turns (the scan on {setup['baseline_turns']}). Baseline = one regex "
        "per key tested on the window and recursed content in every pass (SillyTavern's "
        "method); classic = `select_classic` with a warm matcher cache, trace and chat state "
        "included. The stress row shares keys between entries (hundreds activate per turn).",
        "",
    ]
    rows = []
    for r in classic["rows"]:
        label = f"{r['entries']:,}" + (", keys shared" if r.get("keys_shared") else "")
        c, b = r["classic_ms"], r["baseline_ms"]
        rows.append([
            label, f"{r['keys']:,}", _f(c["p50"], 3), _f(c["p99"], 2), _f(b["p50"], 1),
            f"{r['ratio_p50']:,.0f}×", _f(r["compile_ms"], 0), _f(r["activations_mean"], 1),
        ])  # fmt: skip
    header = ["entries", "keys", "classic p50", "classic p99", "scan p50", "scan/classic",
              "compile", "activations"]  # fmt: skip
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
