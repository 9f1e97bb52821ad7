"""Rendering (DESIGN §2 rules 7 and 9), the selection JSON shape, cuts and gists."""

from __future__ import annotations

import json

from tests.lore_builders import TOKENIZER, book, entry, large_book, turn
from worldbook.core.gist import first_sentence, index_line
from worldbook.core.rendering import (
    INDEX_WITH_TOOL,
    INDEX_WITHOUT_TOOL,
    LOOKUP_TOOL_JSON,
    LOOKUP_TOOL_NAME,
    render,
)
from worldbook.core.selection import select
from worldbook.core.selection_json import selection_to_json
from worldbook.core.truncation import cut_to_tokens
from worldbook.core.types import LoreBook, ModelProfile, SelectionRules, SemanticHit, Turn
from worldbook.runtime.matcher_cache import MatcherCache

RULES = SelectionRules()


def _world(character: str | None = None, book_id: str = "big") -> LoreBook:
    canon = entry("canon", "Canon Law", tokens=40, canon=True)
    return book(book_id, [canon, *large_book(book_id).entries], character=character)


def _sel(t: Turn):  # type: ignore[no-untyped-def]
    return select(t, RULES, TOKENIZER, matcher_cache=MatcherCache())


def test_stable_part_is_byte_identical_across_turns() -> None:
    small = book("small", [entry("w1", "Whole One", tokens=30)])
    first = render(_sel(turn(_world(), small, user="Topic big-1", window=20000)))
    hits = (SemanticHit("big", "big-7", 0.8),)
    second = render(_sel(turn(_world(), small, user="Topic big-9", hits=hits, window=20000)))
    assert first.stable == second.stable
    assert first.stable.encode() == second.stable.encode()
    assert "## Canon Law" in first.stable and "## Whole One" in first.stable
    assert first.stable.index("## Canon Law") < first.stable.index("## Whole One")
    assert first.per_turn != second.per_turn
    assert "## Topic big-1" in first.per_turn and "Topic big-1" not in first.stable


def test_per_turn_part_holds_injected_lore_then_the_index() -> None:
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(10))
    rendered = render(_sel(turn(_world(), hits=hits, window=20000)))
    text = rendered.per_turn
    assert text.index("## Topic big-4") < text.index("# Other topics in this world")
    assert "- Topic big-5 — About it." in text
    assert INDEX_WITHOUT_TOOL in text and LOOKUP_TOOL_NAME not in text


def test_tool_definition_is_constant_and_in_both_formats() -> None:
    hits = (SemanticHit("big", "big-1", 0.9),)
    a = render(_sel(turn(_world(), tools=True, user="Topic big-3", window=20000)))
    b = render(_sel(turn(_world(), tools=True, hits=hits, window=20000)))

    def dump(x: object) -> str:
        return json.dumps(x, ensure_ascii=False)

    assert dump(a.openai_tools()) == dump(b.openai_tools())
    assert dump(a.anthropic()["tools"]) == dump(b.anthropic()["tools"])
    [openai_tool] = a.openai_tools()
    assert openai_tool["type"] == "function"
    assert (
        json.dumps(
            openai_tool["function"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )
        == LOOKUP_TOOL_JSON
    )
    assert openai_tool["function"]["parameters"]["required"] == ["title"]
    [anthropic_tool] = a.anthropic()["tools"]
    assert anthropic_tool["name"] == LOOKUP_TOOL_NAME
    assert anthropic_tool["input_schema"]["properties"]["title"]["type"] == "string"
    # callers mutating their copy cannot change the next turn's bytes
    openai_tool["function"]["name"] = "changed"
    assert a.openai_tools()[0]["function"]["name"] == LOOKUP_TOOL_NAME


def test_with_tools_index_promises_lookup() -> None:
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(10))
    rendered = render(_sel(turn(_world(), tools=True, hits=hits, window=20000)))
    assert INDEX_WITH_TOOL in rendered.per_turn


def test_no_tools_without_support() -> None:
    rendered = render(_sel(turn(_world(), window=20000)))
    assert rendered.openai_tools() == [] and rendered.tools == []
    assert "tools" not in rendered.anthropic()


def test_profile_overrides_tool_support() -> None:
    sel = _sel(turn(_world(), window=20000))
    assert render(sel, ModelProfile(20000, supports_tools=True)).openai_tools()


def test_openai_and_anthropic_message_conventions() -> None:
    rendered = render(_sel(turn(_world(), user="Topic big-2", window=20000)))
    messages = rendered.openai_messages()
    assert messages == [
        {"role": "system", "content": rendered.stable},
        {"role": "system", "content": rendered.per_turn},
    ]
    system = rendered.anthropic()["system"]
    assert system[0] == {
        "type": "text",
        "text": rendered.stable,
        "cache_control": {"type": "ephemeral"},
    }
    assert system[1] == {"type": "text", "text": rendered.per_turn}


def test_empty_parts_are_left_out() -> None:
    rendered = render(_sel(turn(book("b", [entry("c", tokens=10, canon=True)]))))
    assert rendered.per_turn == ""
    assert len(rendered.openai_messages()) == 1
    assert len(rendered.anthropic()["system"]) == 1


def test_group_chat_labels_each_piece_of_lore() -> None:
    alice, bob = _world("Alice", "alice"), _world("Bob", "bob")
    t = turn(alice, bob, user="Topic alice-1 and Topic bob-2", window=40000)
    rendered = render(_sel(t))
    assert "## Canon Law [From Alice's world]" in rendered.stable
    assert "## Canon Law [From Bob's world]" in rendered.stable
    assert "## Topic alice-1 [From Alice's world]" in rendered.per_turn
    assert "## Topic bob-2 [From Bob's world]" in rendered.per_turn


def test_single_character_chat_has_no_labels() -> None:
    rendered = render(_sel(turn(_world("Alice"), user="Topic big-1", window=20000)))
    assert "[From" not in rendered.stable + rendered.per_turn


def test_selection_json_has_the_issue_shape() -> None:
    hits = tuple(SemanticHit("big", f"big-{i}", 1 - i / 100) for i in range(10))
    sel = _sel(turn(_world(), tools=True, user="Topic big-50", hits=hits, window=20000))
    out = selection_to_json(sel, render(sel))
    json.dumps(out)  # serialisable
    e_keys = {"entry_id", "book_id", "title", "tokens"}
    assert set(out["canon"]) >= {"budget", "tokens", "entries", "over_budget"}
    assert e_keys <= set(out["canon"]["entries"][0])
    assert out["whole_books"] == [] and out["per_turn_budget"] == 2000 - 40
    assert {*e_keys, "via", "truncated"} <= set(out["injected"][0])
    assert out["injected"][0]["via"] == "literal"
    assert {*e_keys, "line", "linked"} <= set(out["index"][0])
    assert all(set(m) == {"role", "content"} for m in out["messages"])
    assert out["tools"][0]["function"]["name"] == LOOKUP_TOOL_NAME
    assert {"entry_id", "title", "decision", "reason"} <= set(out["trace"][0])


# --- cuts and gists ---


def test_cut_keeps_short_text_whole() -> None:
    cut = cut_to_tokens("One. Two.", 10, TOKENIZER)
    assert (cut.text, cut.truncated, cut.tokens) == ("One. Two.", False, 4)


def test_cut_at_sentence_boundary() -> None:
    text = "First sentence here. Second sentence is longer than that. Third."
    cut = cut_to_tokens(text, 12, TOKENIZER)
    assert cut.text == "First sentence here. Second sentence is longer than that."
    assert cut.truncated and cut.tokens <= 12


def test_cut_falls_back_to_words_when_no_useful_sentence_end() -> None:
    text = "Short. " + " ".join(f"word{i}" for i in range(50))
    cut = cut_to_tokens(text, 20, TOKENIZER)
    assert cut.truncated and cut.tokens <= 20
    assert cut.text.startswith("Short. word0") and not cut.text.endswith("Short.")


def test_cut_at_cjk_full_stop() -> None:
    text = "東京は大きい。" * 20
    cut = cut_to_tokens(text, 8, TOKENIZER)
    assert cut.text.endswith("。") and cut.truncated and cut.tokens <= 8


def test_first_sentence_and_index_line() -> None:
    assert first_sentence("## Heading\n\nThe Shire is green. Hobbits live there.") == "Heading"
    assert first_sentence("The Shire is green. Hobbits live there.") == "The Shire is green."
    assert first_sentence("東京は首都です。人口が多い。") == "東京は首都です。"
    assert first_sentence("v1.2 is out. Next.") == "v1.2 is out."
    assert index_line("Shire", "The Shire is green. More.", TOKENIZER, 40) == (
        "Shire — The Shire is green."
    )
    long = index_line("Shire", "word " * 100 + ".", TOKENIZER, 10)
    assert long.endswith("…") and TOKENIZER.count(long) <= 10 + 3
    assert index_line("Shire", "Shire.", TOKENIZER, 10) == "Shire"


def _with_lorebook(selection, *entries):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    stable = [e for e in selection.injected if e.via.value == "whole_book"]
    rest = [e for e in selection.injected if e.via.value != "whole_book"]
    return replace(selection, injected=(*stable, *entries, *rest))


def _lore(entry_id: str, text: str, role: str, character: str | None = None):  # type: ignore[no-untyped-def]
    from worldbook.core.types import EntryRef, InjectedEntry, LoreText, Via

    ref = EntryRef(entry_id, "classic", entry_id.title(), 3, character)
    return InjectedEntry(ref, LoreText(text, 3), Via.KEYWORD, role=role)  # type: ignore[arg-type]


def test_the_lorebook_slot_follows_the_stable_prefix_one_message_per_entry() -> None:
    small = book("small", [entry("w1", "Whole One", tokens=30)])
    plain = _sel(turn(_world(), small, user="Topic big-1", window=20000))
    both = _with_lorebook(plain, _lore("a", "Fire.", "system"), _lore("b", "Hello.", "user"))
    before, after = render(plain), render(both)
    assert after.stable == before.stable and after.per_turn == before.per_turn
    messages = after.openai_messages()
    assert messages[1:3] == [
        {"role": "system", "content": "Fire."},
        {"role": "user", "content": "Hello."},
    ]
    assert messages[0]["content"] == before.stable and messages[3]["content"] == before.per_turn
    anthropic = after.anthropic()
    assert [b["text"] for b in anthropic["system"]] == [before.stable, "Fire.", before.per_turn]
    assert anthropic["messages"] == [{"role": "user", "content": "Hello."}]
    assert "messages" not in before.anthropic()  # world-only output is unchanged


def test_lorebook_entries_are_labelled_in_group_chats() -> None:
    from dataclasses import replace

    plain = _sel(turn(_world(), user="hi", window=20000))
    group = replace(
        _with_lorebook(plain, _lore("a", "Fire.", "system", "Ann")), characters=("Ann", "Bo")
    )
    assert render(group).lorebook == (("system", "[From Ann's world]\nFire."),)
