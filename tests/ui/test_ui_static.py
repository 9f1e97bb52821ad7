"""The inspector's files as the server ships them (no browser needed): served under /ui with a
Content Security Policy, self-contained (no URL of another host), every module import resolving,
declared as package data, small modules, and the wide-character table up to date."""

from __future__ import annotations

import fnmatch
import re
import tomllib
import unicodedata
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.ui import eaw_table
from worldbook.api.routes.ui import UI_DIR

REPO = Path(__file__).resolve().parents[2]
ASSETS = sorted(p for p in UI_DIR.rglob("*") if p.is_file())
SCRIPTS = [p for p in ASSETS if p.suffix == ".js"]


def test_ui_redirects_and_serves_the_page_with_a_strict_policy(client: TestClient) -> None:
    moved = client.get("/ui", follow_redirects=False)
    assert moved.status_code == 307 and moved.headers["location"] == "/ui/"
    page = client.get("/ui/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "connect-src 'self'" in policy
    assert "script-src 'self'" in policy and "unsafe" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    assert '<script type="module" src="js/main.js">' in page.text


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(UI_DIR)))
def test_every_module_is_served_as_javascript(client: TestClient, path: Path) -> None:
    served = client.get(f"/ui/{path.relative_to(UI_DIR).as_posix()}")
    assert served.status_code == 200
    assert "javascript" in served.headers["content-type"]
    assert served.headers["x-content-type-options"] == "nosniff"


def test_missing_files_get_the_api_error_shape(client: TestClient) -> None:
    missing = client.get("/ui/js/nope.js")
    assert missing.status_code == 404
    assert set(missing.json()) == {"error"}


def test_no_asset_names_another_host() -> None:
    # The SVG namespace is an identifier, never fetched.
    allowed = {"http://www.w3.org/2000/svg"}
    for path in ASSETS:
        urls = set(
            re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'`)]*", path.read_text())
        )
        assert urls - allowed == set(), f"{path.name} names {urls - allowed}"


def test_every_relative_import_resolves() -> None:
    for path in SCRIPTS:
        for target in re.findall(r'from\s+"(\.{1,2}/[^"]+)"', path.read_text()):
            assert (path.parent / target).resolve().is_file(), f"{path.name} imports {target}"
    index = (UI_DIR / "index.html").read_text()
    for target in re.findall(r'(?:src|href)="((?:js|css)/[^"]+)"', index):
        assert (UI_DIR / target).is_file(), target


def test_assets_are_package_data() -> None:
    """A wheel holds every file of the page (setuptools package-data globs of `worldbook`)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    globs = config["tool"]["setuptools"]["package-data"]["worldbook"]
    package = REPO / "worldbook"
    for path in ASSETS:
        relative = path.relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), f"{relative} is not package data"


def test_modules_stay_small() -> None:
    for path in ASSETS:
        lines = path.read_text().count("\n")
        assert lines < 400, f"{path.name} has {lines} lines"


def test_wide_character_table_is_current() -> None:
    shipped = eaw_table.TARGET.read_text(encoding="utf-8")
    version = re.search(r'UNICODE_VERSION = "([^"]+)"', shipped)
    assert version is not None
    if version.group(1) != unicodedata.unidata_version:
        pytest.skip(
            f"table from Unicode {version.group(1)}; this Python has {unicodedata.unidata_version}"
        )
    assert shipped == eaw_table.render(), "regenerate with: python -m tests.ui.eaw_table"
