"""The multiprocess metrics directory that ``worldbook serve`` and ``worldbook worker`` manage
(ADR 0018).

prometheus-client's multiprocess mode keeps each process's values in files of one directory;
the directory must exist, and be named in ``PROMETHEUS_MULTIPROC_DIR``, before the processes
that write to it start (uvicorn's and Celery's workers inherit the environment when they fork
or spawn). Each run gets a fresh directory of its own under ``<data_dir>/metrics``: values of
an earlier run never leak into this one, and directories of runs whose process died are removed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from prometheus_client import multiprocess

from worldbook.runtime.metrics import MULTIPROC_ENV


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def prepare(data_dir: Path, role: str) -> Path:
    """Make this run's directory and name it in the environment, for this process and the
    ones it starts. An operator's own ``PROMETHEUS_MULTIPROC_DIR`` is kept as it is."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        return path
    base = data_dir / "metrics"
    base.mkdir(parents=True, exist_ok=True)
    _remove_dead_runs(base)
    path = base / f"{role}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir()
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def _remove_dead_runs(base: Path) -> None:
    for run in base.iterdir():
        _, _, pid = run.name.rpartition("-")
        if run.is_dir() and pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(run, ignore_errors=True)


def forget_dead(directory: Path) -> int:
    """Drop the live gauges (RSS, cache sizes) of processes that died without saying so (a
    killed worker); their counters stay, as counted work did happen. Returns how many."""
    dead: set[int] = set()
    for path in directory.glob("gauge_live*_*.db"):
        digits = path.stem.rpartition("_")[2]
        if digits.isdigit() and not pid_alive(int(digits)):
            dead.add(int(digits))
    for pid in dead:
        multiprocess.mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]
    return len(dead)


def mark_exited(directory: Path | None) -> None:
    """Called as a process stops: its live gauges leave the directory with it."""
    if directory is not None:
        multiprocess.mark_process_dead(os.getpid(), str(directory))  # type: ignore[no-untyped-call]
