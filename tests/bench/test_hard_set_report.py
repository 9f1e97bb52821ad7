"""The hard-set section of the bench report: before/after columns, ablations, targets."""

from __future__ import annotations

from typing import Any

from worldbook.bench.hard_set_report import hard_set_markdown, hard_set_targets


def _shares(full: float, shown: float, avoid: float) -> dict[str, Any]:
    row = {
        "turns": 2,
        "gold": 2,
        "gold_full": full,
        "gold_full_or_index": shown,
        "avoid_full": avoid,
        "index_lines_per_turn": 3.0,
        "tokens_per_turn": 500.0,
    }
    return {**row, "per_kind": {"drift": row}, "per_language": {"en": row, "ko": {**row}}}


def _result(after: dict[str, Any]) -> dict[str, Any]:
    methods = {
        "worldbook:e5": after,
        "worldbook:e5 before issue 16": _shares(0.4, 0.5, 0.2),
        "worldbook:e5 recency decay 0.45": _shares(0.6, 0.7, 0.2),
        "st-keyword": _shares(0.1, 0.1, 0.0),
    }
    diag: dict[str, Any] = {
        "missed_gold_by_reason": {},
        "gold_in_full_by_via": {},
        "same_language_pull": {},
    }
    return {
        "input_window": 8192,
        "tokenizer": "cl100k_base",
        "st_budget_tokens": 2048,
        "list_order_budget_tokens": 819,
        "sets": {
            "demo": {
                "entries": 10,
                "entries_by_language": {"en": 9, "ko": 1},
                "canon_tokens": 100,
                "turns": 2,
                "methods": methods,
                "diagnostics": {m: diag for m in methods if m.startswith("worldbook:")},
            }
        },
    }


def test_tables_show_before_and_after_and_each_mechanism() -> None:
    md = "\n".join(hard_set_markdown(_result(_shares(0.85, 0.95, 0.1))))
    assert "| all turns | 2 | 2 | 85% | 95% | 10% | 3.0 | 40% | 50% | 20% | 10% |" in md
    assert "before: full" in md and "st-keyword full" in md
    assert "| worldbook:e5 recency decay 0.45 | 60% | 70% | 20% | 3.0 |" in md
    assert "drift (the talk moved from A to B)" in md


def test_targets_met_and_missed() -> None:
    met = {t["target"]: t["met"] for t in hard_set_targets(_result(_shares(0.85, 0.95, 0.1)))}
    assert met == {
        "hard set demo: gold in full": True,
        "hard set demo: gold in full or index": True,
        "hard set demo: gold in full, worst language (en, 2 gold)": True,
        "hard set demo: confusers in full": True,
    }
    missed = hard_set_targets(_result(_shares(0.7, 0.9, 0.3)))
    assert [t["met"] for t in missed] == [False, False, True, False]
    assert hard_set_targets(None) == []
