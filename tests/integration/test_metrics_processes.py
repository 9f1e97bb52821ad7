"""``worldbook serve --workers 2``: one scrape reports every API process (ADR 0018)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
CLI = [sys.executable, "-m", "worldbook.cli.main"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(url: str, key: str | None = None, method: str = "GET", body: bytes | None = None) -> str:
    request = urllib.request.Request(url, data=body, method=method)
    if key:
        request.add_header("Authorization", f"Bearer {key}")
        request.add_header("X-Worldbook-User", "ops")
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as answer:
        return str(answer.read().decode())


def wait_ready(base: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited: {log.read_text()[-2000:]}")
        try:
            call(base + "/ready")
            return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"serve not ready: {log.read_text()[-2000:]}")


@pytest.fixture
def two_processes(tmp_path: Path) -> Iterator[tuple[str, str, Path]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORLDBOOK_")}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    env.update(WORLDBOOK_DATA_DIR=str(tmp_path), WORLDBOOK_EMBEDDER="fake")
    made = subprocess.run([*CLI, "keys", "create", "m"], env=env, capture_output=True, text=True)
    key = re.search(r"wb_[A-Za-z0-9_-]+", made.stdout + made.stderr)
    assert key, made.stdout + made.stderr
    port, log = free_port(), tmp_path / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*CLI, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(base, proc, log)
        yield base, key.group(0), tmp_path
    finally:
        proc.terminate()
        proc.wait(30)


def test_one_scrape_reports_every_api_process(two_processes: tuple[str, str, Path]) -> None:
    base, key, data_dir = two_processes
    sent = 60
    for _ in range(sent):  # a new connection each: the kernel spreads them over both processes
        call(base + "/v1/books", key)
    deadline = time.monotonic() + 30
    pids: set[str] = set()
    while time.monotonic() < deadline:
        text = call(base + "/metrics")
        pids |= set(re.findall(r'worldbook_process_rss_bytes\{pid="(\d+)"\}', text))
        if len(pids) >= 2:
            break
        call(base + "/v1/books", key)
        sent += 1
    assert len(pids) >= 2, text
    listed = re.search(
        r'worldbook_http_responses_total\{method="GET",route="/v1/books",status="200"\} (\S+)',
        text,
    )
    assert listed and float(listed.group(1)) == sent
    runs = list((data_dir / "metrics").iterdir())
    assert [r.name.split("-")[0] for r in runs] == ["serve"]
