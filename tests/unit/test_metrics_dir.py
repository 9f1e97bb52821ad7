"""The multiprocess metrics directory worldbook manages (ADR 0018)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from worldbook.runtime.metrics import MULTIPROC_ENV
from worldbook.runtime.metrics_dir import forget_dead, pid_alive, prepare


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_prepare_makes_a_fresh_run_dir_and_removes_dead_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(MULTIPROC_ENV, raising=False)
    base = tmp_path / "metrics"
    dead = base / f"serve-{_dead_pid()}"
    alive = base / f"worker-{os.getpid() - 0}"
    dead.mkdir(parents=True)
    (dead / "counter_1.db").write_bytes(b"x")
    try:
        made = prepare(tmp_path, "serve")
        assert os.environ[MULTIPROC_ENV] == str(made)
    finally:
        os.environ.pop(MULTIPROC_ENV, None)
    assert made == base / f"serve-{os.getpid()}" and made.is_dir()
    assert not dead.exists()
    assert not alive.exists() or alive == made
    assert list(made.iterdir()) == []


def test_an_operators_directory_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "mine"
    monkeypatch.setenv(MULTIPROC_ENV, str(own))
    assert prepare(tmp_path, "serve") == own and own.is_dir()
    assert not (tmp_path / "metrics").exists()


def test_forget_dead_drops_live_gauges_of_dead_processes(tmp_path: Path) -> None:
    pid = _dead_pid()
    assert not pid_alive(pid) and pid_alive(os.getpid())
    (tmp_path / f"gauge_liveall_{pid}.db").write_bytes(b"")
    (tmp_path / f"gauge_liveall_{os.getpid()}.db").write_bytes(b"")
    (tmp_path / f"counter_{pid}.db").write_bytes(b"")
    assert forget_dead(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"gauge_liveall_{os.getpid()}.db", f"counter_{pid}.db"]
    )
