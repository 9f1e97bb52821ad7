"""``worldbook generate`` and ``worldbook split`` from the command line
(docs/design/generate-and-split.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.llm_fakes import ScriptedLLM, book, entry
from worldbook.cli import authoring
from worldbook.service.generate import generate_book

TEXT = (
    "# Port Vel\nPort Vel is the pirate city of the north.\n\n"
    "# The Drowned Rat\nThe Drowned Rat is the tavern where captains sell maps.\n"
)


def test_generate_without_a_model_names_the_setting(cli: CliRunner) -> None:
    result = run(cli, "generate", "--premise", "Pirates", "--json", code=6)
    assert "llm_not_configured" in result.stderr and "WORLDBOOK_LLM_URL" in result.stderr


def test_generate_prints_draft_json_that_import_reads(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["Port Vel", "The Drowned Rat", "Iron Guild", "Salt Queen"]
    monkeypatch.setattr(
        authoring, "build_llm", lambda _: ScriptedLLM([book(*(entry(n) for n in names))])
    )
    drafted = run(cli, "generate", "--premise", "Pirates", "--count", "4", "--json")
    assert [e["title"] for e in drafted["entries"]] == names
    path = tmp_path / "book.json"
    path.write_text(json.dumps(drafted), encoding="utf-8")
    imported = run(cli, "import", str(path), "--json")
    assert imported["entries"] == 4 and imported["title"] == drafted["title"]
    exported = json.loads(run(cli, "export", imported["book_id"]).stdout)
    assert sorted(e["comment"] for e in exported["entries"].values()) == sorted(names)


def test_split_dry_run_json_shape(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "lore.md"
    path.write_text(TEXT, encoding="utf-8")
    body = run(cli, "split", str(path), "--json")
    assert [e["title"] for e in body["entries"]] == ["Port Vel", "The Drowned Rat"]
    assert set(body["entries"][0]) >= {"title", "lore", "aliases"}
    assert any("WORLDBOOK_LLM_URL" in w for w in body["warnings"])
    assert body["leading"] + "".join(e["lore"] + e["separator"] for e in body["entries"]) == TEXT


def test_split_save_into_a_book(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "lore.md"
    path.write_text(TEXT, encoding="utf-8")
    run(cli, "split", str(path), "--save", code=2)  # --save needs --book
    seed = tmp_path / "seed.json"
    drafted = generate_book(
        ScriptedLLM([book(*(entry(f"Seed {n}") for n in "ABCD"))]), "x", count=4
    )
    seed.write_text(json.dumps(drafted.to_json()), encoding="utf-8")
    book_id = run(cli, "import", str(seed), "--json")["book_id"]
    saved = run(cli, "split", str(path), "--book", book_id, "--save", "--json")
    assert saved["saved"] is True and all(e["id"] for e in saved["entries"])
    run(cli, "split", str(path), "--book", book_id, "--save", "--user", "mallory", code=3)
    exported = json.loads(run(cli, "export", book_id).stdout)
    assert len(exported["entries"]) == 6


def test_split_over_the_limit_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("a" * 40_001, encoding="utf-8")
    result = run(cli, "split", str(path), "--json", code=2)
    assert "text to split into entries" in result.stderr
