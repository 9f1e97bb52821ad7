"""``worldbook bench load --quick`` end to end (fake embedder, SQLite): a real ``worldbook
serve`` subprocess, clients in another process, load.json's shape and no errors. No timing
assertions: speed is what the command measures, not what a test may assume."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worldbook.bench.load import ratios, targets
from worldbook.bench.load_server import tree_rss_mb
from worldbook.cli.main import app

CELL_KEYS = {
    "backend", "workers", "clients", "turns", "errors", "turns_per_s", "p50_ms", "p99_ms",
    "rss_start_mb", "rss_end_mb", "rss_growth_mb", "server_turn_mean_ms",
}  # fmt: skip


@pytest.mark.slow
def test_quick_load_run_on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDBOOK_EMBEDDER", "fake")
    monkeypatch.setenv("WORLDBOOK_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "out"
    args = ["bench", "load", "--quick", "--backends", "sqlite", "--seconds", "2", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output + repr(result.exception)

    load: dict[str, Any] = json.loads((out / "load.json").read_text(encoding="utf-8"))
    assert load["benchmark"] == "worldbook bench load"
    assert load["machine"]["cpu_count"] >= 1 and load["versions"]["worldbook"] and load["date"]
    assert load["parameters"]["embedder"] == "fake"
    assert load["backends"]["sqlite"]["entries"] == 34
    cells = load["cells"]
    assert [(c["backend"], c["workers"], c["clients"]) for c in cells] == [
        ("sqlite", 1, 1),
        ("sqlite", 1, 8),
    ]
    for cell in cells:
        assert set(cell) >= CELL_KEYS, cell
        assert cell["errors"] == 0, cell.get("error_samples")
        assert cell["turns"] > 0 and cell["rss_end_mb"] > 0
    assert [r["clients"] for r in load["ratios"]] == [8]
    assert {t["target"] for t in load["targets"]} == {
        "load sqlite, 1 process: 8 clients / 1 client turns/s",
        "load sqlite, 1 process, 8 clients: p99 ms",
    }
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["load"]["cells"] == cells
    assert "HTTP load" in (out / "report.md").read_text(encoding="utf-8")


def _cell(clients: int, turns_per_s: float, p99: float, errors: int = 0) -> dict[str, Any]:
    return {"backend": "postgres", "workers": 1, "clients": clients,
            "turns_per_s": turns_per_s, "p99_ms": p99, "errors": errors}  # fmt: skip


def test_targets_and_ratios_from_cells() -> None:
    cells = [_cell(1, 80.0, 25.0), _cell(8, 140.0, 90.0), _cell(32, 150.0, 450.0, errors=2)]
    rows = {t["target"]: (t["value"], t["met"]) for t in targets(cells)}
    assert rows == {
        "load postgres, 1 process: 8 clients / 1 client turns/s": (1.75, True),
        "load postgres, 1 process, 8 clients: p99 ms": (90.0, True),
        "load postgres, 1 process, 32 clients: errors": (2, False),
        "load postgres, 1 process, 32 clients: p99 ms": (450.0, False),
    }
    assert [r["vs_1_client"] for r in ratios(cells)] == [1.75, 1.88]


def test_tree_rss_counts_this_process() -> None:
    if not Path("/proc/self/status").is_file():
        pytest.skip("no /proc")
    assert tree_rss_mb(os.getpid()) > 10
