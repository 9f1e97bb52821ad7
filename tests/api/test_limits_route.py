"""``GET /v1/limits`` answers the limits in force without a key, and the lore inspector reads
them from there instead of keeping its own copy (DESIGN §6)."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from fastapi.testclient import TestClient

from worldbook.core.limit_table import INT32_MAX, LIMITS, Limits

UI_JS = Path(__file__).resolve().parents[2] / "worldbook" / "api" / "ui" / "js"


def test_limits_are_public_and_are_the_ones_in_force(client: TestClient) -> None:
    answer = client.get("/v1/limits")
    assert answer.status_code == 200, answer.text
    expected = {f.name: getattr(LIMITS, f.name) for f in fields(Limits)}
    assert answer.json() == {**expected, "int32_max": INT32_MAX}


def test_the_page_uses_only_limits_the_server_serves(client: TestClient) -> None:
    served = set(client.get("/v1/limits").json())
    used = {
        name
        for path in UI_JS.rglob("*.js")
        for name in re.findall(r"\bLIMITS\.(\w+)", path.read_text(encoding="utf-8"))
    }
    assert used, "the page checks no limit as the author types"
    assert used <= served, used - served


def test_the_page_keeps_no_copy_of_a_limit() -> None:
    source = (UI_JS / "limits.js").read_text(encoding="utf-8")
    assert re.search(r"export const LIMITS = \{\};", source)
    # no "name: number" pairs: every value comes from GET /v1/limits
    assert re.findall(r"^\s*\w+:\s*[\d(]", source, flags=re.MULTILINE) == []
    main = (UI_JS / "main.js").read_text(encoding="utf-8")
    assert "await loadLimits()" in main
