"""``worldbook bench`` reads and writes only the folders it is given (ADR 0019): the samples,
the hard sets, the vector cache and the results folder are settings, and nothing in the package
finds a folder of a source checkout from its own location."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import worldbook.bench.load
from worldbook.bench.common import BenchConfig
from worldbook.cli import bench
from worldbook.cli.main import app
from worldbook.ports import Embedder
from worldbook.settings import WorldbookSettings

PACKAGE = Path(bench.__file__).resolve().parents[1]


def _config(tmp_path: Path, *, quick: bool) -> BenchConfig:
    return BenchConfig(
        out=tmp_path / "out",
        samples=tmp_path / "samples",
        sets=tmp_path / "sets",
        cache=tmp_path / "cache",
        results=tmp_path / "results",
        quick=quick,
    )


def test_the_folders_are_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("SAMPLES", "SETS", "CACHE", "RESULTS"):
        monkeypatch.setenv(f"WORLDBOOK_BENCH_{name}", str(tmp_path / name.lower()))
    current = WorldbookSettings()
    assert current.bench_samples == tmp_path / "samples"
    assert current.bench_results == tmp_path / "results"
    config = _config(tmp_path, quick=False)
    assert config.turns_file == tmp_path / "sets" / "lore_turns.json"
    assert config.hard_sets == [tmp_path / "sets" / "hard_set" / n for n in ("saltreach", "unseen")]


def test_missing_samples_name_the_configured_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WORLDBOOK_BENCH_SAMPLES", str(tmp_path / "nowhere"))
    monkeypatch.setenv("WORLDBOOK_EMBEDDER", "fake")
    monkeypatch.setenv("WORLDBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setattr(bench, "run_bench", _refuse_books)
    result = CliRunner().invoke(app, ["bench", "quality", "--quick", "--out", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert str(tmp_path / "nowhere" / "lorebooks") in " ".join(result.output.split())


def _refuse_books(config: BenchConfig, *_: Any) -> dict[str, Any]:
    bench._book_files(config)  # the check the quality suite makes first
    raise AssertionError("there are no sample books to find")


@pytest.mark.parametrize(("quick", "folder"), [(False, True), (False, False), (True, True)])
def test_a_full_load_run_also_writes_the_results_folder_if_it_exists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, quick: bool, folder: bool
) -> None:
    monkeypatch.setattr(worldbook.bench.load, "run_load", lambda *_, **__: {"cells": []})
    config = _config(tmp_path, quick=quick)
    config.out.mkdir()
    if folder:
        config.results.mkdir()
    result = bench._load(config, WorldbookSettings(), _no_model, lambda _: None)
    assert json.loads((config.out / "load.json").read_text())["cells"] == []
    written = (config.results / "load.json").is_file()
    assert written is (folder and not quick)
    assert ("results_file" in result) is written


def _no_model(*_: Any, **__: Any) -> Embedder:
    raise AssertionError("the load suite loads its model in the server processes")


def _climbs(source: str, depth: int) -> list[int]:
    """Lines of a module ``depth`` folders below the package's (``bench/x.py``: 2) that climb
    from ``__file__`` above the package: ``Path(__file__).parents[depth]`` or higher."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "parents"
        and "__file__" in ast.unparse(node.value)
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, int)
        and node.slice.value >= depth
    ]


def test_no_module_reads_a_folder_beside_the_package() -> None:
    found = {
        str(p.relative_to(PACKAGE)): lines
        for p in sorted(PACKAGE.rglob("*.py"))
        if (lines := _climbs(p.read_text(encoding="utf-8"), len(p.relative_to(PACKAGE).parts)))
    }
    assert found == {}


def test_the_check_sees_a_climb() -> None:
    source = "from pathlib import Path\nA = Path(__file__).resolve().parents[{}]\n"
    assert _climbs(source.format(2), depth=2) == [2]
    assert _climbs(source.format(1), depth=2) == []
