"""The results directory: required keys always present, strict JSON, target checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from worldbook.bench.report import write_results
from worldbook.bench.xquad import LANGUAGES


def _table(r5: float) -> dict[str, dict[str, float]]:
    return {lang: {"r@1": r5 / 2, "r@5": r5, "mrr": r5 / 1.5, "n": 10} for lang in LANGUAGES}


def _run(**suites: Any) -> dict[str, Any]:
    return {
        "date": "2026-12-02T00:00:00+00:00",
        "machine": {"cpu": "test", "cpu_count": 2, "python": "3.11"},
        "versions": {"worldbook": "0"},
        "settings": {"quick": True},
        "suites": list(suites),
        "default_method": "worldbook:e5-small",
        **suites,
    }


def test_keys_are_null_when_their_suite_did_not_run(tmp_path: Path) -> None:
    quality = {
        "xquad": {
            "pool": 60,
            "questions_per_language": dict.fromkeys(LANGUAGES, 10),
            "methods": {
                "worldbook:e5-small": _table(0.95),
                "raw:e5-small": _table(0.97),
                "st-vector-storage": _table(0.2),
            },
        }
    }
    out = write_results(_run(quality=quality), tmp_path)
    stored = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert stored == out
    for key in ("turn_ms", "selection_ms", "scan_baseline_ms", "indexing_entries_per_s"):
        assert stored[key] is None
    assert set(stored["xquad"]["raw:e5-small"]["en"]) == {"r@1", "r@5", "mrr"}
    targets = {t["target"]: t for t in stored["targets"]}
    gap = next(t for name, t in targets.items() if name.startswith("engine below"))
    assert gap["value"] == 0.02 and gap["met"] is False
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "re-implemented" in report and "| `st-vector-storage` |" in report
    assert (tmp_path / "xquad_r5.png").is_file()


def test_non_finite_numbers_become_null_and_samples_stay_out(tmp_path: Path) -> None:
    def timing(p50: float) -> dict[str, float]:
        return {"p50": p50, "p99": p50 * 2, "mean": p50, "max": p50 * 3, "n": 3}

    book = {
        "entries": 2000,
        "keys": 102000,
        "matcher_build_ms": 10.0,
        "scan_compile_ms": 5.0,
        "selection_ms": timing(1.0),
        "scan_baseline_ms": timing(50.0),
        "turn_ms": timing(float("nan")),
        "_samples": {"selection": [1.0, 1.1], "scan": [50.0]},
    }
    latency = {"input_window": 128000, "aliases": 50, "books": {"2000": book}}
    out = write_results(_run(latency=latency), tmp_path)
    text = (tmp_path / "results.json").read_text(encoding="utf-8")
    assert "NaN" not in text and "_samples" not in text
    assert out["turn_ms"] == {"p50": None, "p99": None}
    assert out["selection_ms"] == {"p50": 1.0, "p99": 2.0}
    ratio = next(t for t in out["targets"] if t["target"].startswith("ST-style"))
    assert ratio["value"] == 50.0 and ratio["met"] is True
