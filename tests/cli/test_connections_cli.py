"""``worldbook connections``: create, list, rotate, revoke (ADR 0017)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from worldbook.core.connections import CONNECTION_PREFIX

URL = "http://127.0.0.1:9/v1"


def test_connection_lifecycle(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDBOOK_SECRET_KEY", "cli secret")
    made = run(
        cli,
        "connections",
        "create",
        "Tavern",
        "--upstream-url",
        URL,
        "--book",
        "b1",
        "--upstream-key",
        "sk-cli-secret",
        "--model",
        "smol",
        "--json",
    )
    assert made["token"].startswith(CONNECTION_PREFIX)
    assert made["base_url"].endswith("/openai/v1") and made["has_upstream_key"]
    listed = run(cli, "connections", "list", "--json")
    assert [c["id"] for c in listed] == [made["id"]]
    assert "sk-cli-secret" not in str(listed) and made["token"] not in str(listed)
    assert run(cli, "connections", "list", "--user", "someone", "--json") == []
    rotated = run(cli, "connections", "rotate", made["id"], "--json")
    assert rotated["token"] != made["token"]
    run(cli, "connections", "revoke", made["id"])
    assert run(cli, "connections", "list", "--json")[0]["revoked"] is True


def test_upstream_key_without_secret_key_is_a_clear_error(cli: CliRunner) -> None:
    result = run(
        cli,
        "connections",
        "create",
        "Tavern",
        "--upstream-url",
        URL,
        "--book",
        "b1",
        "--upstream-key",
        "sk-x",
        code=2,
    )
    assert "WORLDBOOK_SECRET_KEY" in result.stderr
