"""The markdown section of the hard-set results (``worldbook.bench.hard_set.run_hard_set``)."""

from __future__ import annotations

from typing import Any

from worldbook.bench.hard_set import KIND_LABELS


def _pct(value: float) -> str:
    return f"{100 * value:.0f}%"


def _table(
    rows: dict[str, dict[str, Any]], methods: dict[str, Any], group: str, label: str
) -> list[str]:
    """One row per kind or language; worldbook's three shares, then each peer's gold in full."""
    default = next(m for m in methods if m.startswith("worldbook:"))
    peers = [m for m in methods if not m.startswith("worldbook:")]
    others = [m for m in methods if m.startswith("worldbook:") and m != default]
    head = [label, "turns", "gold", f"{default} full", "full or index", "avoid full", "index/turn"]
    head += [f"{m} full" for m in [*others, *peers]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in rows:
        wb = methods[default][group][key] if group else methods[default]
        cells = [
            KIND_LABELS.get(key, key) if group == "per_kind" else key,
            str(wb["turns"]),
            str(wb["gold"]),
            _pct(wb["gold_full"]),
            _pct(wb["gold_full_or_index"]),
            _pct(wb["avoid_full"]),
            f"{wb['index_lines_per_turn']:.1f}",
        ]
        for m in [*others, *peers]:
            found = methods[m][group][key] if group else methods[m]
            cells.append(_pct(found["gold_full"]))
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
        "confuser entries injected in full (lower is better).",
    ]
    for name, s in result["sets"].items():
        methods = s["methods"]
        langs = ", ".join(f"{k} {v}" for k, v in s["entries_by_language"].items())
        lines += [
            "",
            f"### {name}: {s['entries']} entries ({langs}), canon {s['canon_tokens']} tokens, "
            f"{s['turns']} turns",
            "",
        ]
        lines += _table({"all": {}}, methods, "", "")
        lines[-1] = lines[-1].replace("| all |", "| all turns |", 1)
        first = methods[next(iter(methods))]
        lines += ["", *_table(first["per_kind"], methods, "per_kind", "kind")]
        lines += ["", *_table(first["per_language"], methods, "per_language", "language")]
        for method, diag in s["diagnostics"].items():
            lines += ["", f"Why gold entries missed ({method}):", ""]
            lines += [f"- {why}: {n}" for why, n in diag["missed_gold_by_reason"].items()]
            vias = ", ".join(f"{k} {v}" for k, v in diag["gold_in_full_by_via"].items())
            lines += [
                f"- gold in full came by: {vias}",
                "",
                "Same-language pull "
                "(meaning-based full slots filled with entries in the turn's language):",
                "",
            ]
            for lang, p in diag["same_language_pull"].items():
                if p["semantic_full_slots"]:
                    lines.append(
                        f"- {lang}: {p['same_language']} of {p['semantic_full_slots']} slots; "
                        f"{_pct(p['same_language_entries_share'])} of entries are in {lang}"
                    )
    return lines
