"""The markdown section of the hard-set results (``worldbook.bench.hard_set.run_hard_set``)."""

from __future__ import annotations

from typing import Any

from worldbook.bench.hard_set import KIND_LABELS

BEFORE = "before issue 16"
BASELINE = "baseline (e5 only)"


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _confusers(row: dict[str, Any]) -> str:
    """Confusers in full as a count ("3 of 19"), the share where older results lack it."""
    if "avoid_full_n" not in row:
        return _pct(row["avoid_full"])
    return f"{row['avoid_full_n']} of {row['avoid']}"


def _roles(methods: dict[str, Any]) -> tuple[str, str | None, list[str]]:
    """The default worldbook method (the first), the one on the earlier settings, the peers."""
    ours = [m for m in methods if m.startswith("worldbook:")]
    before = next((m for m in ours if m.endswith((BEFORE, BASELINE))), None)
    peers = [m for m in methods if not m.startswith("worldbook:")]
    return ours[0], before, peers


def _table(
    rows: dict[str, dict[str, Any]], methods: dict[str, Any], group: str, label: str
) -> list[str]:
    """One row per kind or language: worldbook's shares now and before the hard sets were
    measured, then each peer's gold in full."""
    default, before, peers = _roles(methods)
    head = [label, "turns", "gold", "full", "full or index", "confusers in full", "index/turn"]
    if before:
        head += ["before: full", "before: full or index", "before: confusers in full"]
    head += [f"{m} full" for m in peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def cell(method: str, key: str) -> dict[str, Any]:
        found: dict[str, Any] = methods[method][group][key] if group else methods[method]
        return found

    for key in rows:
        wb = cell(default, key)
        cells = [
            KIND_LABELS.get(key, key) if group == "per_kind" else key,
            str(wb["turns"]),
            str(wb["gold"]),
            _pct(wb["gold_full"]),
            _pct(wb["gold_full_or_index"]),
            _confusers(wb),
            f"{wb['index_lines_per_turn']:.1f}",
        ]
        if before:
            old = cell(before, key)
            cells += [_pct(old["gold_full"]), _pct(old["gold_full_or_index"]), _confusers(old)]
        cells += [_pct(cell(m, key)["gold_full"]) for m in peers]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _mechanisms(result: dict[str, Any]) -> list[str]:
    """Every worldbook variant's overall shares on every set (the ablation table)."""
    sets = result["sets"]
    names = [m for m in next(iter(sets.values()))["methods"] if m.startswith("worldbook:")]
    if len(names) < 2:
        return []
    head = ["worldbook variant"]
    for name in sets:
        head += [f"{name}: full", "full or index", "confusers in full", "index/turn"]
    title = "### Before and after issue 16"
    if any(n.endswith(BASELINE) for n in names):
        title = "### The views side by side (ADR 0016; *before* is the baseline, e5 alone)"
    elif len(names) > 2:
        title = "### What each mechanism buys (each one taken out of the defaults in turn)"
    lines = [
        "",
        title,
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for method in names:
        cells = [method]
        for s in sets.values():
            m = s["methods"][method]
            cells += [_pct(m["gold_full"]), _pct(m["gold_full_or_index"]), _confusers(m)]
            cells.append(f"{m['index_lines_per_turn']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def hard_set_markdown(result: dict[str, Any]) -> list[str]:
    """Per set: overall, per kind and per language tables, then the miss diagnostics."""
    lines = [
        "## Hard evaluation sets (issue 16)",
        "",
        f"Model window {result['input_window']} tokens ({result['tokenizer']}); SillyTavern "
        f"budget {result['st_budget_tokens']} tokens; list order gets "
        f"{result['list_order_budget_tokens']}. *full*: share of gold entries injected in full; "
        "*full or index*: also counting world-index lines; *avoid full*: share of the turns' "
        "confuser entries injected in full (lower is better); *before*: the engine's settings "
        "before issue 16.",
    ]
    lines += _mechanisms(result)
    for name, s in result["sets"].items():
        methods = s["methods"]
        langs = ", ".join(f"{k} {v}" for k, v in s["entries_by_language"].items())
        default, before, _ = _roles(methods)
        lines += [
            "",
            f"### {name}: {s['entries']} entries ({langs}), canon {s['canon_tokens']} tokens, "
            f"{s['turns']} turns — `{default}`",
            "",
        ]
        lines += _table({"all": {}}, methods, "", "")
        lines[-1] = lines[-1].replace("| all |", "| all turns |", 1)
        first = methods[default]
        lines += ["", *_table(first["per_kind"], methods, "per_kind", "kind")]
        lines += ["", *_table(first["per_language"], methods, "per_language", "language")]
        for method in (default, before):
            if method is not None:
                lines += _diagnostics(method, s["diagnostics"][method])
    return lines


def _diagnostics(method: str, diag: dict[str, Any]) -> list[str]:
    lines = ["", f"Why gold entries missed ({method}):", ""]
    lines += [f"- {why}: {n}" for why, n in diag["missed_gold_by_reason"].items()]
    vias = ", ".join(f"{k} {v}" for k, v in diag["gold_in_full_by_via"].items())
    lines += [
        f"- gold in full came by: {vias}",
        "",
        "Same-language pull (meaning-based full slots filled with entries in the turn's language):",
        "",
    ]
    for lang, p in diag["same_language_pull"].items():
        if p["semantic_full_slots"]:
            lines.append(
                f"- {lang}: {p['same_language']} of {p['semantic_full_slots']} slots; "
                f"{_pct(p['same_language_entries_share'])} of entries are in {lang}"
            )
    return lines


def hard_set_targets(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The hard sets' targets (docs/design/benchmarks.md) on every hard set: gold in full >= 80%,
    in full or index >= 92%, no language below 65% in full, confusers in full no more than
    before them."""
    if not result:
        return []
    rows: list[dict[str, Any]] = []
    for name, s in result["sets"].items():
        default, before, _ = _roles(s["methods"])
        m = s["methods"][default]
        lang, row = min(m["per_language"].items(), key=lambda kv: (kv[1]["gold_full"], kv[0]))
        worst = row["gold_full"]
        checks = [
            ("gold in full", m["gold_full"], ">= 0.80", m["gold_full"] >= 0.80),
            (
                "gold in full or index",
                m["gold_full_or_index"],
                ">= 0.92",
                m["gold_full_or_index"] >= 0.92,
            ),
            (
                f"gold in full, worst language ({lang}, {row['gold']} gold)",
                worst,
                ">= 0.65",
                worst >= 0.65,
            ),
        ]
        if before:
            was = s["methods"][before]["avoid_full"]
            checks.append(
                (
                    "confusers in full",
                    m["avoid_full"],
                    f"<= {was:.3f} (before)",
                    m["avoid_full"] <= was,
                )
            )
        for label, value, goal, met in checks:
            rows.append(
                {"target": f"hard set {name}: {label}", "value": value, "goal": goal, "met": met}
            )
    return rows
