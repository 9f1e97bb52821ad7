"""The real local model server (xllamacpp + SmolLM2), started once per test session, and the
flushed test Redis of the Celery tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

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


TEST_REDIS_URL = os.environ.get("WORLDBOOK_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The test Redis, flushed before and after the test (skipped when it does not answer)."""
    client = redis.Redis.from_url(TEST_REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at WORLDBOOK_TEST_REDIS_URL={TEST_REDIS_URL}: {exc}")
    client.flushdb()
    yield TEST_REDIS_URL
    client.flushdb()
    client.close()
