"""The proxy's pure body handling (ADR 0017): reading the conversation, naming the chat,
placing the lore, and fitting it into the room the app's request leaves."""

from __future__ import annotations

from typing import Any

from worldbook.core.limit_table import LIMITS
from worldbook.core.proxy_messages import (
    chat_key,
    conversation,
    recent,
    splice_anthropic,
    splice_openai,
)
from worldbook.core.rendering import RenderedPrompt
from worldbook.core.types import Message
from worldbook.service.proxy_turn import fit, output_reserve

LORE = RenderedPrompt(
    stable="# World lore\nstable", per_turn="# Lore for this turn\nturn", supports_tools=True
)


def test_conversation_reads_text_parts_and_skips_the_rest() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "image"}]},
            {"role": "assistant", "content": None, "tool_calls": []},
            {"role": "tool", "content": "result"},
            {"role": "user", "content": "Again", "name": "Ann"},
        ]
    }
    assert conversation(body) == [
        Message(role="user", content="Hi"),
        Message(role="user", content="Again", name="Ann"),
    ]


def test_chat_key_is_stable_as_the_chat_grows_and_differs_by_connection() -> None:
    first = [Message(role="user", content="Hello")]
    grown = [*first, Message(role="assistant", content="Hi"), Message(role="user", content="On")]
    assert chat_key("c1", first) == chat_key("c1", grown)
    assert chat_key("c1", first) != chat_key("c2", first)
    assert chat_key("c1", first) != chat_key("c1", [Message(role="user", content="Edited")])


def test_recent_keeps_the_newest_within_the_turn_limit() -> None:
    big = "x" * LIMITS.message_max
    many = [Message(role="user", content=big) for _ in range(10)] + [
        Message(role="user", content="newest")
    ]
    kept = recent(many)
    assert kept[-1].content == "newest"
    assert sum(len(m.content) for m in kept) <= LIMITS.turn_text_max
    assert len(
        recent([Message(role="user", content="y" * (LIMITS.message_max + 5))])[0].content
    ) == (LIMITS.message_max)


def test_openai_splice_after_the_apps_system_messages_and_tools_after_its_own() -> None:
    body: dict[str, Any] = {
        "model": "m",
        "temperature": 0.2,
        "messages": [
            {"role": "system", "content": "A"},
            {"role": "developer", "content": "B"},
            {"role": "user", "content": "Hi"},
        ],
        "tools": [{"type": "function", "function": {"name": "app_tool"}}],
    }
    out = splice_openai(body, LORE)
    roles = [(m["role"], m["content"][:3]) for m in out["messages"]]
    assert roles == [
        ("system", "A"),
        ("developer", "B"),
        ("system", "# W"),
        ("system", "# L"),
        ("user", "Hi"),
    ]
    assert [t["function"]["name"] for t in out["tools"]] == ["app_tool", "lookup_lore"]
    assert out["temperature"] == 0.2 and body["messages"][2]["content"] == "Hi"  # untouched
    assert len(body["messages"]) == 3  # the app's body is not changed in place


def test_anthropic_splice_turns_a_string_system_into_blocks() -> None:
    out = splice_anthropic({"system": "Be brief.", "messages": []}, LORE)
    assert out["system"][0] == {"type": "text", "text": "Be brief."}
    assert out["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert out["tools"][0]["name"] == "lookup_lore"


def test_fit_gives_up_per_turn_lore_first_then_all() -> None:
    count = len  # one token a character: easy to reason about
    whole, used, given_up = fit(LORE, 10_000, count)
    assert whole is LORE and given_up == ()
    tools = used - len(LORE.stable) - len(LORE.per_turn)
    lighter, _, given_up = fit(LORE, len(LORE.stable) + tools, count)
    assert lighter.per_turn == "" and given_up == ("per_turn",)
    nothing, used, given_up = fit(LORE, 3, count)
    assert nothing.stable == "" and used == 0 and given_up == ("per_turn", "all_lore")


def test_output_reserve() -> None:
    assert output_reserve({"max_tokens": 50}, 1024) == 50
    assert output_reserve({"max_completion_tokens": 70, "max_tokens": 50}, 1024) == 70
    assert output_reserve({"max_tokens": True}, 1024) == 1024
