"""Real processes for the replica test: ``worldbook serve`` and ``worldbook worker`` on one
PostgreSQL database and one Redis, each in its own process group and data directory."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CLI = [sys.executable, "-m", "worldbook.cli.main"]
DEADLINE_S = 120.0  # liveness bound for polling, not a speed assertion


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(pred: Callable[[], bool], what: str, deadline_s: float = DEADLINE_S) -> None:
    deadline = time.monotonic() + deadline_s
    while not pred():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.2)


def stack_env(database_url: str, broker_url: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("WORLDBOOK_") and k != "PROMETHEUS_MULTIPROC_DIR"
    }
    env.update(
        WORLDBOOK_DATABASE_URL=database_url,
        WORLDBOOK_BROKER_URL=broker_url,
        WORLDBOOK_EMBEDDER="fake",
        WORLDBOOK_SWEEP_INTERVAL_S="2",
        WORLDBOOK_INDEXING_STUCK_S="3",
        WORLDBOOK_INDEX_BATCH_SIZE="8",
    )
    return env


def create_key(env: dict[str, str]) -> str:
    made = subprocess.run([*CLI, "keys", "create", "replicas"], env=env, capture_output=True)
    found = re.search(rb"wb_[A-Za-z0-9_-]+", made.stdout + made.stderr)
    assert found, made.stdout + made.stderr
    return found.group(0).decode()


@dataclass
class Proc:
    """One worldbook process; stopped or killed by its own process group id."""

    name: str
    args: list[str]
    env: dict[str, str]
    log: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self) -> Proc:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*CLI, *self.args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    def kill(self) -> None:
        """SIGKILL the whole group: no shutdown code runs (a crash, an OOM kill)."""
        if self.alive():
            assert self.proc is not None
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if not self.alive():
            return
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.kill()


def api(name: str, env: dict[str, str], data: Path) -> Proc:
    port = free_port()
    own = {**env, "WORLDBOOK_DATA_DIR": str(data / name)}
    args = ["serve", "--host", "127.0.0.1", "--port", str(port)]
    proc = Proc(name, args, own, data / f"{name}.log", port).start()
    wait_for(lambda: _ready(proc), f"{name} to be ready")
    return proc


def _ready(proc: Proc) -> bool:
    if not proc.alive():
        raise AssertionError(f"{proc.name} exited:\n{proc.tail()}")
    try:
        return httpx.get(f"http://127.0.0.1:{proc.port}/ready", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def worker(name: str, env: dict[str, str], data: Path) -> Proc:
    port = free_port()
    own = {
        **env,
        "WORLDBOOK_DATA_DIR": str(data / name),
        "WORLDBOOK_WORKER_METRICS_PORT": str(port),
    }
    args = ["worker", "--concurrency", "1"]
    proc = Proc(name, args, own, data / f"{name}.log", port).start()

    def ready() -> bool:
        if not proc.alive():
            raise AssertionError(f"{name} exited:\n{proc.tail()}")
        return " ready." in proc.tail()

    wait_for(ready, f"{name} to be ready")
    return proc


def metric(text: str, name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{k}="{v}"' in head for k, v in labels.items()):
            total += float(value)
    return total


class Client:
    """Calls to one API process as one user."""

    def __init__(self, proc: Proc, key: str, user: str = "ops") -> None:
        self.base = f"http://127.0.0.1:{proc.port}"
        self.headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": user}

    def call(self, method: str, path: str, request_id: str | None = None, **kwargs: Any) -> Any:
        headers = {**self.headers, **({"X-Request-Id": request_id} if request_id else {})}
        answer = httpx.request(method, self.base + path, headers=headers, timeout=60, **kwargs)
        if request_id:
            assert answer.headers["x-request-id"] == request_id
        assert answer.status_code < 300, (answer.status_code, answer.text[:500])
        return answer.json() if answer.content else None

    def turn(self, book_ids: list[str], text: str, **more: Any) -> dict[str, Any]:
        body = {"book_ids": book_ids, "messages": [{"role": "user", "content": text}], **more}
        result: dict[str, Any] = self.call("POST", "/v1/select", json=body)
        return result
