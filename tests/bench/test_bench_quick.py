"""``worldbook bench quality --quick`` end to end through the CLI: loose sanity only.

No timing assertions (speed is what the command measures, not what a test may assume). The
run uses the embedding disk cache under benchmarks/.cache, so it is fast after the first run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.samples import SAMPLES_ROOT
from worldbook.cli.main import app

SAMPLES = SAMPLES_ROOT
REQUIRED = (
    "xquad",
    "turn_ms",
    "selection_ms",
    "scan_baseline_ms",
    "indexing_entries_per_s",
    "default_method",
)

pytestmark = [
    pytest.mark.samples,
    pytest.mark.model,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (SAMPLES / "xquad").is_dir() or not (SAMPLES / "lorebooks").is_dir(),
        reason=f"sample files not found at {SAMPLES.resolve()}",
    ),
]


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return []


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("bench")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORLDBOOK_DATA_DIR", str(out / "data"))
        mp.setenv("WORLDBOOK_BENCH_SAMPLES", str(SAMPLES))
        mp.setenv("WORLDBOOK_BENCH_SETS", str(Path(__file__).resolve().parents[2] / "benchmarks"))
        result = CliRunner().invoke(app, ["bench", "quality", "--quick", "--out", str(out)])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_report_and_required_keys(results: tuple[Path, dict[str, Any]]) -> None:
    out, data = results
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# worldbook bench")
    assert (out / "xquad_r5.png").stat().st_size > 0
    for key in REQUIRED:
        assert key in data, key
    assert data["machine"]["cpu_count"] >= 1
    assert data["versions"]["worldbook"]
    assert data["default_method"] in data["xquad"]
    for method, table in data["xquad"].items():
        assert len(table) == 12, method
        for lang, row in table.items():
            assert set(row) == {"r@1", "r@5", "mrr"}, (method, lang)
            assert 0.0 <= row["r@1"] <= row["r@5"] <= 1.0, (method, lang, row)


def test_numbers_are_finite(results: tuple[Path, dict[str, Any]]) -> None:
    _, data = results
    numbers = _numbers(data)
    assert numbers
    assert all(math.isfinite(n) for n in numbers)


def test_default_beats_english_only_vectors_off_english(
    results: tuple[Path, dict[str, Any]],
) -> None:
    _, data = results
    default = data["xquad"][data["default_method"]]
    peer = data["xquad"]["st-vector-storage"]
    others = [lang for lang in default if lang != "en"]
    mean = sum(default[lg]["r@5"] for lg in others) / len(others)
    peer_mean = sum(peer[lg]["r@5"] for lg in others) / len(others)
    assert mean > peer_mean
    assert sum(default[lg]["r@5"] > peer[lg]["r@5"] for lg in others) >= 8


def test_lore_turns_scored_for_every_method(results: tuple[Path, dict[str, Any]]) -> None:
    _, data = results
    lore = data["quality"]["lore"]
    assert lore["turns"] >= 40
    assert {"st-keyword", "st-vector-storage", "list-order", data["default_method"]} <= set(
        lore["methods"]
    )
    for method, row in lore["methods"].items():
        assert row["full"] + row["index"] + row["missing"] == pytest.approx(1.0, abs=1e-3), method
        if method.startswith("st-") or method == "list-order":
            assert row["index"] == 0, method  # peers have no world index
