"""Browser tests of the lore inspector: a real server process and Debian's headless Chromium,
driven by Playwright for Python (``executable_path=/usr/bin/chromium``; Playwright's own browser
downloads are never used). ``scripts/test`` installs ``chromium`` when it is missing.

Every browser context records the requests the page makes; at teardown a test fails if any
went to a host other than the server's own origin (docs/design/inspector.md: no CDN, works offline).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

CHROMIUM = Path(os.environ.get("WORLDBOOK_TEST_CHROMIUM", "/usr/bin/chromium"))
# Flags for a sandboxed CI machine: no GPU, no network chatter of the browser's own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
REPO = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("WORLDBOOK_UI_SCREENSHOTS") or REPO / "test-output" / "ui-screenshots")
# The shared samples live beside the repository (CI lays them there); a checkout elsewhere
# names them with WORLDBOOK_TEST_SAMPLES.
SAMPLES = Path(os.environ.get("WORLDBOOK_TEST_SAMPLES") or REPO.parent / "shared" / "samples")
ELDORIA = SAMPLES / "lorebooks" / "Eldoria.json"


def _browser_missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium; scripts/test does it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    reason = _browser_missing()
    if reason is None:
        return
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Any]:
    """An in-process API (fake embedder) for the static-file tests."""
    from fastapi.testclient import TestClient

    from tests.api.conftest import make_components
    from worldbook.api.app import create_app

    parts = make_components(tmp_path)
    try:
        with TestClient(create_app(components=parts), raise_server_exceptions=False) as test:
            yield test
    finally:
        parts.close()


@dataclass
class Server:
    base: str
    key: str
    data_dir: Path
    log: Path

    def call(self, method: str, path: str, body: Any = None, user: str = "alice") -> Any:
        """Call the API as ``user`` (the tests' own client, beside the page)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={
                "Authorization": f"Bearer {self.key}",
                "X-Worldbook-User": user,
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
        return json.loads(raw) if raw else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _server_env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORLDBOOK_")}
    env.update(
        PYTHONPATH=str(REPO),
        WORLDBOOK_DATA_DIR=str(data_dir),
        # The real multilingual model: French and Japanese previews must find the right lore.
        WORLDBOOK_EMBEDDER=os.environ.get("WORLDBOOK_UI_TEST_EMBEDDER", "e5-small"),
        WORLDBOOK_USAGE_ALERT_TURNS="3",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    return env


def _wait_ready(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(base + "/ready", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"the server was not ready in 120 s: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``python -m worldbook.cli.main serve`` on a free loopback port and a fresh data dir."""
    data_dir = tmp_path_factory.mktemp("ui-server")
    env = _server_env(data_dir)
    cli = [sys.executable, "-m", "worldbook.cli.main"]
    made = subprocess.run(
        [*cli, "keys", "create", "ui-tests"], env=env, capture_output=True, text=True, check=True
    )
    key = re.search(r"wb_[A-Za-z0-9_-]+", made.stdout + made.stderr)
    assert key, made.stdout + made.stderr
    port = _free_port()
    log = data_dir / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*cli, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(base, process, log)
        yield Server(base=base, key=key.group(0), data_dir=data_dir, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Browser:
    """A page in a fresh Chromium profile, with every request and page error it saw."""

    page: Any
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def _open(server: Server, **context: Any) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="wb-chromium-")
    try:
        with sync_playwright() as driver:
            browser_context = driver.chromium.launch_persistent_context(
                profile,
                executable_path=str(CHROMIUM),
                args=CHROMIUM_ARGS,
                headless=True,
                accept_downloads=True,
                **{"viewport": {"width": 1200, "height": 900}, **context},
            )
            browser_context.set_default_timeout(30_000)
            page = browser_context.pages[0] if browser_context.pages else browser_context.new_page()
            seen = Browser(page=page)
            browser_context.on("request", lambda r: seen.requests.append(r.url))
            page.on("pageerror", lambda e: seen.errors.append(str(e)))
            try:
                yield seen
            finally:
                browser_context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    origin = urlsplit(server.base).netloc
    foreign = [
        url
        for url in seen.requests
        if urlsplit(url).scheme not in ("data", "blob") and urlsplit(url).netloc != origin
    ]
    assert not foreign, f"the page contacted other hosts: {foreign}"
    assert seen.requests, "no request was recorded: the request log is not working"
    assert not seen.errors, f"JavaScript errors on the page: {seen.errors}"


@pytest.fixture
def browser(server: Server) -> Iterator[Browser]:
    """A desktop-sized page in the light scheme."""
    yield from _open(server, color_scheme="light")


@pytest.fixture
def phone(server: Server) -> Iterator[Browser]:
    """A 360 px wide page in the dark scheme."""
    yield from _open(
        server, color_scheme="dark", viewport={"width": 360, "height": 760}, is_mobile=True
    )
