"""``worldbook index --json`` names every model a deployment embeds with (ADR 0016)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from worldbook.adapters.embedders.registry import aligned_spec


def test_without_an_aligned_view_one_model_is_listed(cli: CliRunner) -> None:
    body = run(cli, "index", "--json")
    assert body["model_ids"] == [body["model_id"]]


def test_an_aligned_view_is_listed_after_the_primary(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORLDBOOK_ALIGNED_EMBEDDER", "use-m3")
    body = run(cli, "index", "--rebuild", "--json")
    assert body["model_ids"][0] == body["model_id"]
    assert body["model_ids"][1].startswith("use-m3@")


def test_the_aligned_spec() -> None:
    assert aligned_spec("none", "e5-small") is None
    assert aligned_spec("auto", "fake") is None  # the test embedder gets no second view
    assert aligned_spec("auto", "use-m3") is None  # USE beside itself adds nothing
    assert aligned_spec("auto", "e5-small") == "use-m3"  # the package is installed here
    assert aligned_spec("e5-small", "e5-small") is None
    assert aligned_spec("sentence-transformers:x", "e5-small") == "sentence-transformers:x"
