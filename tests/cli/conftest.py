"""What every CLI test needs: a fresh data folder with the fake embedder, and one way to run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from worldbook.cli.main import app


@pytest.fixture()
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("WORLDBOOK_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORLDBOOK_EMBEDDER", "fake")
    return CliRunner()


def run(cli: CliRunner, *args: str, code: int = 0) -> Any:
    """Invoke ``worldbook *args``, expect exit ``code``; the parsed JSON when ``--json`` was
    asked for and it succeeded, else the click result."""
    result = cli.invoke(app, list(args))
    assert result.exit_code == code, (result.stdout, result.stderr)
    return json.loads(result.stdout) if code == 0 and "--json" in args else result
