"""Split text into entries (docs/ai-authoring.md §4) with a scripted model: ranges only, validated,
one repair, word-for-word lore, fallbacks, and saving through a narrow callable."""

from __future__ import annotations

import pytest

from tests.llm_fakes import ScriptedLLM
from worldbook.core.drafts import EntryDraft
from worldbook.core.types import BookMode
from worldbook.errors import LimitExceeded, LLMAuthFailed, LLMTruncated
from worldbook.service.split_text import split_into_entries

PARAGRAPHS = [
    "Port Vel is the pirate city of the north, built on the bones of drowned ships.",
    "Its harbor never freezes, for the smugglers' fires burn below the quays.",
    "The Drowned Rat is the tavern where captains sell their maps.",
    "Its ale is the worst on the coast, and the landlady knows every secret.",
    "The Iron Guild rules the docks and taxes every cargo twice.",
]
TEXT = "\n\n".join(PARAGRAPHS) + "\n"


def ranges(*items: tuple[str, int, int]) -> dict[str, object]:
    return {"entries": [{"title": t, "aliases": [], "first": a, "last": b} for t, a, b in items]}


def test_the_model_names_ranges_and_the_lore_is_the_text_word_for_word() -> None:
    llm = ScriptedLLM([ranges(("Port Vel", 1, 2), ("The Drowned Rat", 3, 4), ("Iron Guild", 5, 5))])
    outcome = split_into_entries(TEXT, llm=llm)
    assert outcome.method == "llm" and outcome.warnings == []
    assert [p.title for p in outcome.split.parts] == ["Port Vel", "The Drowned Rat", "Iron Guild"]
    assert outcome.split.parts[0].lore == "\n\n".join(PARAGRAPHS[:2])
    assert outcome.split.joined() == TEXT
    prompt = llm.requests[0].messages[-1].content
    assert "[1] Port Vel is the pirate city" in prompt and "[5] The Iron Guild" in prompt


def test_bad_ranges_are_sent_back_once_and_the_better_plan_wins() -> None:
    bad = ranges(("Port Vel", 1, 2), ("Overlap", 2, 3), ("Out", 4, 9))
    good = ranges(("Port Vel", 1, 2), ("The Drowned Rat", 3, 4), ("Iron Guild", 5, 5))
    llm = ScriptedLLM([bad, good])
    outcome = split_into_entries(TEXT, llm=llm)
    assert [p.title for p in outcome.split.parts] == ["Port Vel", "The Drowned Rat", "Iron Guild"]
    repair = llm.requests[1].messages[-1].content
    assert "overlap" in repair and "not a range within 1–5" in repair and "in no entry" in repair
    assert outcome.warnings == []


def test_what_the_model_leaves_out_is_cut_by_paragraphs_and_reported() -> None:
    partial = ranges(("Port Vel", 1, 2))
    llm = ScriptedLLM([partial, "no idea"])
    outcome = split_into_entries(TEXT, llm=llm)
    assert outcome.split.parts[0].title == "Port Vel"
    assert len(outcome.split.parts) == 4  # three paragraphs left, one entry each
    assert outcome.split.joined() == TEXT
    assert any("3 of the 5 paragraphs are in no entry" in w for w in outcome.warnings)
    assert any("cut by headings and paragraphs" in w for w in outcome.warnings)


def test_a_cut_plan_keeps_its_whole_ranges() -> None:
    partial = (
        '{"entries": [{"title": "Port Vel", "aliases": ["Vel"], "first": 1, "last": 2}, '
        '{"title": "Dro'
    )
    llm = ScriptedLLM([LLMTruncated("cut", partial=partial), LLMTruncated("cut", partial="{")])
    outcome = split_into_entries(TEXT, llm=llm)
    assert outcome.split.parts[0].title == "Port Vel"
    assert outcome.split.parts[0].aliases == ("Vel",)
    assert outcome.split.joined() == TEXT


def test_unusable_titles_fall_back_on_the_text() -> None:
    llm = ScriptedLLM([ranges(("#", 1, 5)), ranges(("", 1, 5))])
    outcome = split_into_entries(TEXT, llm=llm)
    assert [p.title for p in outcome.split.parts] == [
        "Port Vel is the pirate city of the north, built on the…"
    ]


def test_no_model_means_headings_and_paragraphs_with_a_warning() -> None:
    outcome = split_into_entries(TEXT, llm=None)
    assert outcome.method == "headings" and len(outcome.split.parts) == 5
    assert "WORLDBOOK_LLM_URL" in outcome.warnings[0]


def test_a_failing_model_falls_back_and_says_why() -> None:
    outcome = split_into_entries(TEXT, llm=ScriptedLLM([LLMAuthFailed("refused (HTTP 401)")]))
    assert outcome.method == "headings" and len(outcome.split.parts) == 5
    assert "refused (HTTP 401)" in outcome.warnings[0]


def test_over_the_limit_writes_nothing_and_calls_nothing() -> None:
    added: list[list[EntryDraft]] = []

    def add(drafts: list[EntryDraft]) -> list[str]:
        added.append(drafts)
        return []

    llm = ScriptedLLM([])
    with pytest.raises(LimitExceeded, match="text to split into entries"):
        split_into_entries("a" * 40_001, llm=llm, add_entries=add)
    assert added == [] and llm.requests == []


def test_saving_goes_through_the_callable_with_classic_keys() -> None:
    received: list[list[EntryDraft]] = []

    def add(drafts: list[EntryDraft]) -> list[str]:
        received.append(drafts)
        return [f"e{i}" for i in range(len(drafts))]

    llm = ScriptedLLM(
        [{"entries": [{"title": "Port Vel", "aliases": ["Vel"], "first": 1, "last": 5}]}]
    )
    outcome = split_into_entries(TEXT, llm=llm, add_entries=add, mode=BookMode.CLASSIC)
    assert outcome.entry_ids == ["e0"]
    assert received[0][0].keys == ["Port Vel", "Vel"]
    body = outcome.to_json()
    assert body["saved"] is True and body["entries"][0]["id"] == "e0"
    assert body["leading"] + "".join(e["lore"] + e["separator"] for e in body["entries"]) == TEXT


def test_previews_shrink_to_fit_a_small_context_window() -> None:
    long_paragraphs = "\n\n".join(f"Paragraph {n}. " + "lore " * 400 for n in range(10))
    llm = ScriptedLLM([ranges(("All", 1, 10))], context_tokens=2048, max_output_tokens=512)
    split_into_entries(long_paragraphs, llm=llm)
    request = llm.requests[0]
    assert request.max_output_tokens <= 512
    prompt_chars = sum(len(m.content) for m in request.messages)
    assert prompt_chars < (2048 - request.max_output_tokens) * 3
