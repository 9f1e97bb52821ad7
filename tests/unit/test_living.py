"""The living world's pure rules (worldbook.core.living, living_tools): tool bytes, parsing and
validation of calls, names and "already said" under Unicode folding, composition, states and the
rate-limit answer; plus a property test of append/undo sequences on the in-memory store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.living import (
    SEGMENT_JOIN,
    LivingLimits,
    NamedEntry,
    WindowCounts,
    already_in,
    check_rate,
    compose,
    is_living,
    name_key,
    named_entry,
)
from worldbook.core.living_calls import CallContext, parse_call
from worldbook.core.living_tools import (
    LORE_APPEND_TOOL_JSON,
    LORE_CREATE_TOOL_JSON,
    living_tools,
)
from worldbook.core.rendering import RenderedPrompt
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput, LimitExceeded, RateLimited
from worldbook.testing import InMemoryStore

CTX = CallContext("book", "chat", "m1", "call_1")
LORE = "Port Vel is the pirate city of the north."


def test_tool_definitions_are_constant_bytes_in_both_renderings() -> None:
    tools = living_tools()
    assert [t["name"] for t in tools] == ["lore_create", "lore_append"]
    assert json.dumps(tools[0], sort_keys=True, ensure_ascii=False, separators=(",", ":")) == (
        LORE_CREATE_TOOL_JSON
    )
    tools[0]["name"] = "mutated"  # copies: the constant cannot be changed by a caller
    assert living_tools()[0]["name"] == "lore_create"
    on = RenderedPrompt("s", "p", supports_tools=True, living_tools=True)
    off = RenderedPrompt("s", "p", supports_tools=True)
    no_tools = RenderedPrompt("s", "p", supports_tools=False, living_tools=True)
    assert [t["name"] for t in on.tools] == ["lookup_lore", "lore_create", "lore_append"]
    assert [t["name"] for t in off.tools] == ["lookup_lore"] and no_tools.tools == []
    assert on.openai_tools()[2]["function"] == json.loads(LORE_APPEND_TOOL_JSON)
    assert (
        on.anthropic()["tools"][1]["input_schema"]
        == json.loads(LORE_CREATE_TOOL_JSON)["parameters"]
    )


def test_parse_create_trims_and_validates_against_the_limits() -> None:
    call = parse_call(
        CTX,
        "lore_create",
        {"title": "  Port   Vel ", "lore": f"  {LORE}\n", "aliases": ["Vel", " "]},
    )
    assert (call.title, call.text, call.aliases) == ("Port Vel", LORE, ("Vel",))
    text_call = parse_call(CTX, "lore_create", json.dumps({"title": "Port Vel", "lore": LORE}))
    assert (
        text_call.arguments_sha
        == parse_call(CTX, "lore_create", {"title": "Port Vel", "lore": LORE}).arguments_sha
    )
    with pytest.raises(LimitExceeded) as short:
        parse_call(CTX, "lore_create", {"title": "Port Vel", "lore": "Short."})
    assert short.value.field == "arguments.lore"
    # Classic books take short lore; ten CJK characters meet the world minimum.
    classic = CallContext("book", "chat", "m1", "c", mode=BookMode.CLASSIC)
    assert parse_call(classic, "lore_create", {"title": "Vel", "lore": "A port."}).text == "A port."
    assert parse_call(CTX, "lore_create", {"title": "東京", "lore": "東京は日本の首都である港町だ"})
    for bad, field in [
        ({"title": "Port Vel", "lore": LORE, "aliases": "Vel"}, "arguments.aliases"),
        ({"title": 3, "lore": LORE}, "arguments.title"),
        ([1, 2], "arguments"),
    ]:
        with pytest.raises(InvalidInput) as refused:
            parse_call(CTX, "lore_create", bad)
        assert refused.value.field == field


def test_parse_append_needs_one_target_and_some_text() -> None:
    call = parse_call(CTX, "lore_append", {"entry_id": "abc_DEF-1", "text": " More. "})
    assert (call.entry_id, call.title, call.text) == ("abc_DEF-1", None, "More.")
    for bad, field in [
        ({"text": "More."}, "arguments.title"),
        ({"title": "A", "entry_id": "b", "text": "More."}, "arguments.title"),
        ({"entry_id": "../x", "text": "More."}, "arguments.entry_id"),
        ({"title": "Vel", "text": " … !"}, "arguments.text"),
        ({"title": "Vel", "text": "   "}, "arguments.text"),
        ({"title": "Vel", "text": "x" * 20_001}, "arguments.text"),
    ]:
        with pytest.raises(InvalidInput) as refused:
            parse_call(CTX, "lore_append", bad)
        assert refused.value.field == field, bad
    with pytest.raises(InvalidInput):
        parse_call(CTX, "lore_delete", {})


def test_call_keys_tell_messages_swipes_and_calls_apart() -> None:
    args = {"title": "Port Vel", "lore": LORE}
    keys = {
        parse_call(CallContext("b", "chat", m, c, swipe=s), "lore_create", args).call_key
        for m, c, s in [("m1", "c1", None), ("m2", "c1", None), ("m1", "c2", None), ("m1", "c1", 0)]
    }
    assert len(keys) == 4


def test_names_match_as_the_selection_matcher_folds_them() -> None:
    assert name_key("ＰＯＲＴ  Vel") == name_key("port vel")
    assert name_key("Mt.Doom") == name_key("Mt. Doom")
    assert name_key("Aragorn's sword") != name_key("Aragorn")
    entries = [
        NamedEntry("off", "Moscow", (), False),
        NamedEntry("ru", "Москва", ("Moscow",), True),
        NamedEntry("jp", "東京", ("Tokyo",), True),
    ]
    assert named_entry(entries, ["МОСКВА"]) == "ru"
    assert named_entry(entries, ["moscow"]) == "ru"  # the disabled entry does not exist
    assert named_entry(entries, ["Kyoto", "tokyo"]) == "jp"
    assert named_entry(entries, ["東京駅"]) is None  # a name, not a mention


def test_already_said_folds_case_punctuation_and_scripts() -> None:
    lore = "Port Vel is the pirate city of the north. Москва — столица. 東京駅は大きい。"
    assert already_in("port vel is THE pirate city", lore)
    assert already_in("Москва, столица!", lore)
    assert already_in("東京駅", lore)
    assert not already_in("the pirate city of the northern sea", lore)
    assert not already_in("Vel is the pirate", "Port Velvet is the pirate city")  # words
    assert not already_in("Киев — столица", lore)  # Cyrillic is not folded away


def test_compose_joins_paragraphs() -> None:
    assert compose("Base.", []) == "Base."
    assert compose("Base.", ["One.", "Two."]) == SEGMENT_JOIN.join(["Base.", "One.", "Two."])


def test_rate_refusals_name_the_limit_and_the_next_write() -> None:
    at = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
    limits = LivingLimits()
    check_rate(WindowCounts(89, at, 29, at), limits, at)
    with pytest.raises(RateLimited) as live:
        check_rate(WindowCounts(40, at, 30, at - timedelta(hours=23, minutes=30)), limits, at)
    assert live.value.retry_after_s == 30 * 60
    assert "at most 30 live writes in 24 hours" in live.value.message
    assert "30 min" in live.value.message and "2026-12-04T12:30:00" in live.value.message
    with pytest.raises(RateLimited) as attempts:
        check_rate(WindowCounts(90, at - timedelta(hours=1), 0, None), limits, at)
    assert "attempts" in attempts.value.message and attempts.value.retry_after_s == 23 * 3600


def test_the_setting_must_be_true() -> None:
    assert is_living({"living_world": True})
    assert not is_living({"living_world": "true"}) and not is_living({})


HUMAN = "The Iron Guild rules the docks and taxes every cargo twice."


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.integers(0, 5)),
            st.tuples(st.just("undo"), st.integers(0, 20)),
        ),
        max_size=25,
    )
)
def test_lore_is_always_the_human_text_plus_the_live_segments(
    steps: list[tuple[str, int]],
) -> None:
    """Whatever appends and undos happen, in any order, the entry's lore is the person's text
    followed by the live appended segments in write order — never anything else."""
    store = InMemoryStore()
    book = store.create_book("o", BookDraft(title="B", settings={"living_world": True}))
    entry = store.add_entries(book.id, [EntryDraft(title="Iron Guild", lore=HUMAN)])[0]
    for i, (op, n) in enumerate(steps):
        if op == "append":
            ctx = CallContext(book.id, "chat", f"m{i}", f"c{i}")
            call = parse_call(ctx, "lore_append", {"title": "iron guild", "text": f"Fact {n}."})
            store.record_write(call, limits=LivingLimits(10_000, 10_000))
        else:
            writes = store.list_writes(book.id, limit=500)
            if writes:
                store.undo_write(writes[n % len(writes)].id)
    live = [
        w.text
        for w in reversed(store.list_writes(book.id, limit=500))
        if w.state == "live" and w.effect == "appended"
    ]
    assert store.get_entry(entry.id).lore == compose(HUMAN, live)
    assert len(set(live)) == len(live)  # a fact already said is never added twice
