"""The classic engine in ``worldbook bench``: latency rows and targets in the report, and the
classic and hybrid methods in the lore-quality suite (wiring only; no timing assertions)."""

from __future__ import annotations

import json
from pathlib import Path

from worldbook.bench.classic_latency import classic_rows
from worldbook.bench.classic_report import classic_md, classic_targets
from worldbook.bench.quality import LabelledTurn, run_lore
from worldbook.core.types import Message, ModelProfile
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

LORE = "A long enough piece of lore about the place, well over twenty characters."


def test_classic_rows_reach_the_report_and_its_targets() -> None:
    classic = classic_rows(sizes=(20, 40), turns=4, baseline_turns=1, stress_baseline_turns=0)
    assert [r["entries"] for r in classic["rows"]] == [20, 40]
    lines = classic_md(classic)
    assert any(line.startswith("| 40 |") for line in lines)
    targets = classic_targets(classic)
    assert targets[0]["target"].startswith("classic turn p50 (40 entries)")
    assert classic_md(None) == [] and classic_targets(None) == []


def test_lore_quality_has_classic_and_hybrid_methods(tmp_path: Path) -> None:
    book = {
        "entries": {
            "0": {"uid": 0, "key": ["tower"], "comment": "The Tower", "content": LORE},
            "1": {"uid": 1, "key": ["river"], "comment": "The River", "content": LORE},
        }
    }
    path = tmp_path / "towers.json"
    path.write_text(json.dumps(book), encoding="utf-8")
    turns = [
        LabelledTurn(
            "t1", "towers.json", "en", (Message("user", "Climb the tower."),), ("The Tower",)
        )
    ]
    settings = WorldbookSettings(data_dir=tmp_path, embedder="fake")
    result = run_lore(
        settings,
        files=[path],
        turns=turns,
        embedders=[("fake", HashingEmbedder())],
        minilm=HashingEmbedder(),
        profile=ModelProfile(8192, "cl100k_base"),
    )
    assert result["keyed_books"] == ["towers.json"]
    classic = result["methods"]["worldbook:classic"]
    assert classic["full"] == 1.0  # "tower" is the entry's key
    assert "worldbook:hybrid" in result["methods"] and "st-keyword" in result["methods"]
