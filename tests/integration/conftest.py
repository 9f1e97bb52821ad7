"""The real local model server (xllamacpp + SmolLM2), started once per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.local_llm import LocalLLMServer, missing_packages


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalLLMServer]:
    """A loopback OpenAI-compatible server; skipped only where its packages are missing."""
    problem = missing_packages()
    if problem is not None:
        pytest.skip(f"no local model server: {problem}; scripts/setup-venv installs both")
    log = tmp_path_factory.mktemp("llm") / "server.log"
    server = LocalLLMServer(log).start()
    try:
        yield server
    finally:
        server.stop()
