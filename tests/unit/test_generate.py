"""Generate with AI (docs/design/generate-and-split.md) against a scripted model: validation, one
repair round, drops reported, nothing saved, and the draft JSON importable."""

from __future__ import annotations

import json

import pytest

from tests.llm_fakes import ScriptedLLM, book, entry
from worldbook.adapters.formats import parse_book
from worldbook.core.limits import validate_entry_draft
from worldbook.core.matching import normalize
from worldbook.errors import (
    InvalidInput,
    LimitExceeded,
    LLMBadReply,
    LLMNotConfigured,
    LLMTruncated,
    LLMUnavailable,
)
from worldbook.service.generate import generate_book

NAMES = ["Port Vel", "The Drowned Rat", "Iron Guild", "Salt Queen", "Tide Archive", "Ghost Reef"]


def test_a_valid_reply_is_one_call_and_every_entry_is_kept() -> None:
    llm = ScriptedLLM([book(*(entry(n) for n in NAMES[:4]))])
    drafted = generate_book(llm, "A drowned pirate coast", count=4, language="French", seed=3)
    assert [e.title for e in drafted.entries] == NAMES[:4]
    assert drafted.title == "The Drowned Coast"
    assert len(llm.requests) == 1
    request = llm.requests[0]
    assert request.schema is not None and request.schema["properties"]["entries"]["maxItems"] == 4
    assert "French" in request.messages[-1].content and request.seed == 3


def test_no_model_is_a_503_naming_the_setting() -> None:
    with pytest.raises(LLMNotConfigured, match="WORLDBOOK_LLM_URL"):
        generate_book(None, "A drowned pirate coast")


@pytest.mark.parametrize(
    ("premise", "count", "error"),
    [
        ("", 8, InvalidInput),
        ("x" * 2001, 8, LimitExceeded),
        ("ok", 3, InvalidInput),
        ("ok", 17, InvalidInput),
    ],
)
def test_bad_inputs_are_refused_before_any_call(
    premise: str, count: int, error: type[Exception]
) -> None:
    llm = ScriptedLLM([])
    with pytest.raises(error):
        generate_book(llm, premise, count=count)
    assert llm.requests == []


def test_invalid_entries_are_sent_back_once_and_replaced() -> None:
    first = book(
        entry("Port Vel", "Port Vel", "Vel"),  # lore under the 20-character minimum
        entry("The Drowned Rat", None, "Port Vel"),  # alias free again: Port Vel is dropped
        entry("X"),  # title under 2 characters
        entry("Iron Guild"),
        entry("iron guild"),  # the same title, folded
    )
    second = book(entry("Salt Queen"), entry("Tide Archive"), entry("IRON GUILD"))
    llm = ScriptedLLM([first, second])
    drafted = generate_book(llm, "A drowned pirate coast", count=4)
    assert [e.title for e in drafted.entries] == [
        "The Drowned Rat",
        "Iron Guild",
        "Salt Queen",
        "Tide Archive",
    ]
    repair = llm.requests[1].messages
    assert repair[-2].role == "assistant" and "Port Vel" in repair[-2].content
    assert "entries[0].lore" in repair[-1].content and "entries[2].title" in repair[-1].content
    assert "“The Drowned Rat”" in repair[-1].content  # told which titles are taken
    schema = llm.requests[1].schema
    assert schema is not None and schema["properties"]["entries"]["maxItems"] == 2
    assert any("is already a title or alias" in w for w in drafted.warnings)
    assert any(w.startswith("repair reply") and "IRON GUILD" in w for w in drafted.warnings)


def test_titles_and_aliases_never_repeat_across_scripts() -> None:
    first = book(
        entry("Москва", None, "МОСКВА", "Третий Рим"),  # own title as alias: dropped quietly
        entry("東京", "東京は海に沈んだ都市で、多くの船が集まる。", "Ｔｏｋｙｏ", "Третий Рим"),
        entry("Tokyo Bay", None, "tokyo"),
        entry("Port Vel", None, "Vel", "  "),
    )
    drafted = generate_book(ScriptedLLM([first]), "A world", count=4)
    names = [normalize(n) for e in drafted.entries for n in [e.title, *e.aliases]]
    assert len(names) == len(set(names))
    assert drafted.entries[0].aliases == ["Третий Рим"]
    assert drafted.entries[1].aliases == ["Ｔｏｋｙｏ"]  # NFKC folds it to "tokyo"
    assert drafted.entries[2].aliases == []  # "tokyo" is already an alias of 東京
    assert any("Третий Рим" in w and "dropped" in w for w in drafted.warnings)
    for draft in drafted.entries:
        validate_entry_draft(draft)


def test_a_reply_cut_at_the_output_limit_keeps_its_whole_entries() -> None:
    whole = json.dumps(book(*(entry(n) for n in NAMES[:5])))
    cut = whole[: whole.index("Tide Archive") + 5]
    llm = ScriptedLLM(
        [LLMTruncated("cut", partial=cut), book(entry("Ghost Reef"), entry("Salt Queen"))]
    )
    drafted = generate_book(llm, "A world", count=5)
    assert [e.title for e in drafted.entries] == [*NAMES[:4], "Ghost Reef"]
    assert any("cut off" in w for w in drafted.warnings)


def test_a_failed_repair_keeps_the_first_replys_entries() -> None:
    first = book(*(entry(n) for n in NAMES[:4]), entry("Z"))
    llm = ScriptedLLM([first, LLMUnavailable("server down")])
    drafted = generate_book(llm, "A world", count=5)
    assert [e.title for e in drafted.entries] == NAMES[:4]
    assert any("repair request failed" in w for w in drafted.warnings)
    assert any("asked for 5 entries; 4 were usable" in w for w in drafted.warnings)


def test_fewer_than_four_usable_entries_is_a_bad_reply() -> None:
    llm = ScriptedLLM(["not json at all", "still not json"])
    with pytest.raises(LLMBadReply, match="0 usable entries"):
        generate_book(llm, "A world", count=4)
    assert len(llm.requests) == 2


def test_the_first_call_failing_is_the_callers_error() -> None:
    with pytest.raises(LLMUnavailable):
        generate_book(ScriptedLLM([LLMUnavailable("down")]), "A world")


def test_the_draft_json_imports_as_it_was_generated() -> None:
    drafted = generate_book(
        ScriptedLLM(
            [book(*(entry(n, None, n.split()[-1] + "s", canon=n == "Port Vel") for n in NAMES[:4]))]
        ),
        "A world",
        count=4,
    )
    imported = parse_book(json.dumps(drafted.to_json()).encode())
    assert imported.format == "worldbook_draft"
    assert imported.book.title == drafted.title
    assert [(e.title, e.lore, e.aliases, e.canon) for e in imported.entries] == [
        (e.title, e.lore, e.aliases, e.canon) for e in drafted.entries
    ]
    assert imported.warnings == []
