"""The results directory of a bench run: ``results.json``, ``report.md`` and the PNG plots.

``results.json`` always carries the keys runs are compared on over time (docs/design/benchmarks.md):
``xquad``, ``turn_ms``, ``selection_ms``, ``scan_baseline_ms``, ``indexing_entries_per_s``,
``default_method`` — ``null`` where the suite that measures them did not run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from worldbook.bench.classic_report import classic_md, classic_targets
from worldbook.bench.common import cell
from worldbook.bench.hard_set_report import hard_set_markdown, hard_set_targets
from worldbook.bench.load_report import load_md
from worldbook.bench.plots import write_plots
from worldbook.bench.xquad import LANGUAGES, summary

PEERS_NOTE = (
    "The SillyTavern-style methods (st-keyword, st-vector-storage) are re-implemented in "
    "`worldbook/bench/peers.py` from their documented behaviour (the project's peer survey, "
    "§1.1 World Info and §1.2 Vector Storage, which cites SillyTavern's docs and source); no "
    "SillyTavern code is used. Only activation and budget are modelled: no recursion, "
    "inclusion groups, probability or timed effects."
)


def _clean(value: Any) -> Any:
    """JSON-safe: drop private keys (``_samples``), non-finite floats become null."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _pair(row: dict[str, Any] | None) -> dict[str, float] | None:
    return None if row is None else {"p50": row["p50"], "p99": row["p99"]}


def assemble(run: dict[str, Any]) -> dict[str, Any]:
    """Add the comparison keys and the target checks to a run's raw results."""
    quality = run.get("quality") or {}
    latency = run.get("latency") or {}
    indexing = run.get("indexing") or {}
    xq = (quality.get("xquad") or {}).get("methods")
    big = (latency.get("books") or {}).get("2000") or {}
    default = run["default_method"]
    out = dict(run)
    out["xquad"] = (
        {m: {lang: {k: t[k] for k in ("r@1", "r@5", "mrr")} for lang, t in tab.items()}
         for m, tab in xq.items()}
        if xq else None
    )  # fmt: skip
    out["turn_ms"] = _pair(big.get("turn_ms"))
    out["selection_ms"] = _pair(big.get("selection_ms"))
    out["scan_baseline_ms"] = _pair(big.get("scan_baseline_ms"))
    out["indexing_entries_per_s"] = (
        {
            "engine": indexing["rows"]["engine-1-worker"],
            "raw": indexing["raw"],
            "engine_2_workers": indexing["rows"]["engine-2-workers"],
        }
        if indexing
        else None
    )
    out["targets"] = (
        _targets(out, default)
        + classic_targets(latency.get("classic"))
        + hard_set_targets(quality.get("hard_set"))
        + list((run.get("load") or {}).get("targets") or [])
    )
    return out


def _targets(out: dict[str, Any], default: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def add(
        name: str, value: float, op: str, limit: float, *, digits: int | None = None, unit: str = ""
    ) -> None:
        """The target ``value op limit`` (``op``: ``>=`` or ``<=``); the row shows ``value``
        rounded to ``digits`` when given, and the goal as written here."""
        met = value >= limit if op == ">=" else value <= limit
        shown = value if digits is None else round(value, digits)
        rows.append({"target": name, "value": shown, "goal": f"{op} {limit}{unit}", "met": met})

    xq = out.get("xquad")
    if xq and default in xq:
        s = summary(xq[default])
        add("XQuAD R@5, default embedder, worst language", s["min_r@5"], ">=", 0.88)
        add("XQuAD R@5, default embedder, mean of 11 non-English", s["mean_r@5_non_en"], ">=", 0.93)
        raw = "raw:" + default.split(":", 1)[1]
        if raw in xq:
            # The engine may beat its raw model (title header, chunking); only a shortfall counts.
            gap = max(xq[raw][lg]["r@5"] - xq[default][lg]["r@5"] for lg in xq[default])
            name = "engine below its raw embedder, worst language R@5 (negative = above)"
            add(name, gap, "<=", 0.01, digits=4)
    if out.get("turn_ms"):
        add("end-to-end turn p50 (2,000 entries), ms", out["turn_ms"]["p50"], "<=", 30)
        add("end-to-end turn p99 (2,000 entries), ms", out["turn_ms"]["p99"], "<=", 80)
    if out.get("selection_ms"):
        add("selection core p50 (2,000 entries), ms", out["selection_ms"]["p50"], "<=", 2)
    if out.get("selection_ms") and out.get("scan_baseline_ms"):
        ratio = out["scan_baseline_ms"]["p50"] / out["selection_ms"]["p50"]
        name = "ST-style scan / selection core, p50 (2,000 entries)"
        add(name, ratio, ">=", 10, digits=1, unit="x")
    return rows


def write_results(run: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """Write results.json, report.md and plots; returns the assembled results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    results = assemble(run)
    plots = write_plots(results, out_dir)
    results["plots"] = [p.name for p in plots]
    clean: dict[str, Any] = _clean(results)
    (out_dir / "results.json").write_text(
        json.dumps(clean, indent=1, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )
    (out_dir / "report.md").write_text(markdown(clean), encoding="utf-8")
    return clean


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def markdown(r: dict[str, Any]) -> str:
    lines = [
        "# worldbook bench",
        "",
        f"{r['date']} · {r['machine']['cpu']} · {r['machine']['cpu_count']} CPUs · "
        f"Python {r['machine']['python']} · worldbook {r['versions'].get('worldbook')} · "
        f"{'quick' if r['settings']['quick'] else 'full'} run · suites: "
        f"{', '.join(r['suites'])} · default method `{r['default_method']}`",
        "",
        PEERS_NOTE,
        "",
    ]
    if r.get("targets"):
        lines += ["## Targets", ""]
        lines += _table(
            ["target", "measured", "goal", "met"],
            [[t["target"], cell(t["value"], 3), t["goal"], "yes" if t["met"] else "**no**"]
             for t in r["targets"]],
        )  # fmt: skip
        lines.append("")
    lines += _xquad_md(r)
    lines += _lore_md(r)
    hard = (r.get("quality") or {}).get("hard_set")
    if hard:
        lines += [*hard_set_markdown(hard), ""]
    lines += _latency_md(r)
    lines += _indexing_md(r)
    lines += load_md(r)
    for plot in r.get("plots", []):
        lines += [f"![{plot}]({plot})", ""]
    return "\n".join(lines) + "\n"


def _xquad_md(r: dict[str, Any]) -> list[str]:
    xq = r.get("xquad")
    if not xq:
        return []
    info = r["quality"]["xquad"]
    default = r["default_method"]
    lines = [
        "## XQuAD cross-lingual retrieval",
        "",
        f'{info["pool"]} English paragraphs as entries (all titled "Paragraph"), questions in '
        f"12 languages ({info['questions_per_language']['en']} per language) as the newest "
        "message. `raw:` = the model on bare texts by brute force; `st-vector-storage` counts "
        "a question as found only inside its top 5 above 0.25; `list-order` ranks by position. "
        "The keyword scan is not listed: the paragraphs carry no keys, so it finds nothing.",
        "",
    ]
    for metric in ("r@5", "r@1", "mrr"):
        rows = []
        for method, table in xq.items():
            values = [table[lang][metric] for lang in LANGUAGES]
            mean = sum(values[1:]) / len(values[1:])
            rows.append([f"`{method}`", *[cell(v) for v in values], cell(mean, 3)])
        lines += [f"**{metric.upper()}**", ""]
        lines += _table(["method", *LANGUAGES, "mean 11 non-en"], rows)
        lines.append("")
    if "st-vector-storage" in xq and default in xq:
        a = summary(xq[default])["mean_r@5_non_en"]
        b = summary(xq["st-vector-storage"])["mean_r@5_non_en"]
        ratio = f"{a / b:.1f}×" if b else "∞"
        lines += [f"Non-English mean R@5: `{default}` {a:.3f} vs `st-vector-storage` {b:.3f} "
                  f"({ratio}).", ""]  # fmt: skip
    return lines


def _lore_md(r: dict[str, Any]) -> list[str]:
    lore = (r.get("quality") or {}).get("lore")
    if not lore:
        return []
    if not lore["turns"]:
        return [
            "## Lore selection",
            "",
            f"No labelled turns for {', '.join(lore['books'])} (the turn file names its books "
            "by file name); they were imported and indexed only.",
            "",
        ]
    lines = [
        "## Lore selection on the sample books",
        "",
        f"{lore['turns']} labelled turns (benchmarks/lore_turns.json) in "
        f"{', '.join(lore['languages'])} over {', '.join(lore['books'])}; model window "
        f"{lore['input_window']} tokens (SillyTavern budget 25 % = {lore['st_budget_tokens']}). "
        "Share of gold entries that reached the model in full, only as a world-index line, or "
        "not at all; lore tokens spent per turn. The books are small (4–19 entries) and the "
        "turns were written for this project, so read this as a sanity check of behaviour "
        "across languages, not as a leaderboard.",
        "",
    ]
    if lore.get("keyed_books"):
        lines += [
            "`worldbook:classic` imports the books with keys as classic lorebooks (keys only, "
            "SillyTavern / CCv3 rules); `worldbook:hybrid` as hybrid world books (meaning and "
            f"names plus keys); both on {', '.join(lore['keyed_books'])}.",
            "",
        ]
    rows = [
        [
            f"`{m}`",
            cell(s["full"]),
            cell(s["index"]),
            cell(s["missing"]),
            cell(s["tokens_per_turn"], 0),
        ]
        for m, s in lore["methods"].items()
    ]
    lines += _table(["method", "in full", "index only", "not at all", "tokens/turn"], rows)
    langs = lore["languages"]
    rows = [
        [f"`{m}`", *[cell(s["per_language"].get(lg, {}).get("full")) for lg in langs]]
        for m, s in lore["methods"].items()
    ]
    lines += ["", "In full, per language:", ""]
    lines += _table(["method", *langs], rows)
    return [*lines, ""]


def _latency_md(r: dict[str, Any]) -> list[str]:
    lat = r.get("latency")
    if not lat:
        return []
    lines = [
        "## Latency and scale (one core)",
        "",
        f"Synthetic books, {lat['aliases']} aliases per entry, model window "
        f"{lat['input_window']}. ST-style scan = every title and alias a key, scan depth 2, "
        "whole words, keys compiled once per book. End-to-end = `select_turn` on an indexed "
        "book in SQLite with one new user message (≤ 50 words) embedded by the default model; "
        '"msgs cached" = the same turns again with every message\'s vector cached (the turn '
        'without the model); "embed" = embedding one such message alone.',
    ]
    if lat.get("embed_baseline"):
        lines.append(
            f'"embed, baseline" = the same messages embedded by {lat["embed_baseline"]} '
            "(the engine the default replaced), in the same run."
        )
    lines.append("")
    rows = []
    for n, b in lat["books"].items():
        sel, scan = b["selection_ms"], b["scan_baseline_ms"]
        turn, emb = b.get("turn_ms"), b.get("embed_ms")
        cached, base = b.get("turn_cached_messages_ms"), b.get("embed_baseline_ms")
        ratio = scan["p50"] / sel["p50"] if sel["p50"] else float("nan")
        rows.append([
            n, str(b["keys"]), cell(sel["p50"], 3), cell(sel["p99"], 3), cell(scan["p50"], 1),
            cell(scan["p99"], 1), f"{ratio:.1f}×", cell(turn and turn["p50"], 1),
            cell(turn and turn["p99"], 1), cell(cached and cached["p50"], 1),
            cell(emb and emb["p50"], 1),
            cell(base and base["p50"], 1), cell(b["matcher_build_ms"], 0),
        ])  # fmt: skip
    lines += _table(
        ["entries", "keys", "select p50", "select p99", "scan p50", "scan p99", "scan/select",
         "turn p50", "turn p99", "turn p50, msgs cached", "embed p50", "embed p50, baseline",
         "matcher build"],
        rows,
    )  # fmt: skip
    pool = lat.get("pool")
    if pool:
        lines += [
            "",
            f"Pool of {pool['books']} books × {pool['entries_per_book']} entries, a random "
            f"book per turn: select p50 {cell(pool['selection_ms']['p50'], 3)} ms, p99 "
            f"{cell(pool['selection_ms']['p99'], 3)} ms on later visits; first visit (builds "
            f"the book's matcher) p50 {cell(pool['selection_first_visit_ms']['p50'], 2)} ms.",
        ]
    lines += classic_md(lat.get("classic"))
    return [*lines, "", "All times in ms.", ""]


def _indexing_md(r: dict[str, Any]) -> list[str]:
    ix = r.get("indexing")
    if not ix:
        return []
    rows = [["raw embedder (2 threads)", cell(ix["raw"], 2), "1.00"]]
    rows += [[k, cell(v, 2), cell(ix["vs_raw"][k], 2)] for k, v in ix["rows"].items()]
    lines = [
        "## Indexing throughput",
        "",
        f"{ix['entries']} XQuAD paragraphs ({ix['texts']} texts), `{ix['embedder']}`, batch "
        f"{ix['batch_size']}; in-process queue into SQLite. Celery/Redis rows: "
        "`benchmarks/bench_indexing.py`.",
        "",
    ]
    return [*lines, *_table(["path", "entries/s", "vs raw"], rows), ""]
