"""A served app loads its embedding model at start, off the request path."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import make_components
from worldbook.api.app import create_app
from worldbook.errors import IndexUnavailable
from worldbook.ports import Vectors
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder


class SpyEmbedder(HashingEmbedder):
    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.queries: list[list[str]] = []
        self.fail = fail

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.queries.append(list(texts))
        if self.fail:
            raise IndexUnavailable("model file missing")
        return super().embed_queries(texts)


def test_warm_up_embeds_once_in_a_background_thread(tmp_path: Path) -> None:
    parts = make_components(tmp_path)
    spy = SpyEmbedder()
    parts.services.embedder = spy
    try:
        thread = parts.warm_up_in_background()
        assert thread is not threading.current_thread() and thread.daemon
        thread.join(10)
        assert spy.queries == [["warm-up"]]
    finally:
        parts.close()


def test_a_failed_warm_up_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    parts = make_components(tmp_path)
    parts.services.embedder = SpyEmbedder(fail=True)
    try:
        with caplog.at_level(logging.WARNING):
            parts.warm_up_in_background().join(10)
        assert "embedding model not loaded at start: model file missing" in caplog.text
    finally:
        parts.close()


def test_an_app_that_owns_its_components_warms_up_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Components] = []

    def record(self: Components) -> None:
        started.append(self)

    monkeypatch.setattr(Components, "warm_up_in_background", record)
    app = create_app(WorldbookSettings(embedder="fake", data_dir=tmp_path))
    with TestClient(app) as client:
        assert client.get("/health").status_code == 200
    assert len(started) == 1
