"""Invariants of the classic engine over random books, chats and chat states (DESIGN §3, "Done
when"): disabled entries never appear, the budget is never exceeded (no entry is kept for being
first), the same turn gives the same selection, and a call depends only on its inputs."""

from __future__ import annotations

import copy
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.lore_builders import books_once
from tests.unit.classic.helpers import COUNT, select
from worldbook.core.classic import (
    ChatState,
    ClassicBook,
    ClassicEntry,
    ClassicSettings,
    ClassicTurn,
    EntryChatState,
    TimedEffect,
    select_classic,
)
from worldbook.core.types import Message
from worldbook.runtime.classic_cache import ClassicMatcherCache

WORDS = ["Gondor", "Rohan", "feu", "feuille", "東京", "앨리스", "кот", "steward", "orc", "the"]
KEYS = [*WORDS, "/gon(dor)?/i", "/(a+)+$/", "Minas Tirith", "#tag", ""]
DECORATORS = [
    "@@activate",
    "@@dont_activate",
    "@@scan_depth 1",
    "@@probability 50",
    "@@priority 7",
    "@@order 3",
    "@@role user",
    "@@exclude_keys orc",
    "@@additional_keys steward",
    "@@activate_only_every 2",
    "@@keep_activate_after_match",
    "@@dont_activate_after_match",
    "@@is_greeting 0",
    "@@unknown 1",
    "@@@activate",
]


@st.composite
def entries(draw: st.DrawFn, book_id: str) -> tuple[ClassicEntry, ...]:
    out = []
    for i in range(draw(st.integers(0, 10))):
        words = draw(st.lists(st.sampled_from(WORDS), max_size=6))
        out.append(
            ClassicEntry(
                id=f"{book_id}{i}",
                book_id=book_id,
                title=f"{book_id} entry {i}",
                content=" ".join(["Lore", *words]),
                position=i,
                keys=tuple(draw(st.lists(st.sampled_from(KEYS), max_size=3))),
                secondary_keys=tuple(draw(st.lists(st.sampled_from(WORDS), max_size=2))),
                selective_logic=draw(st.integers(0, 3)),
                constant=draw(st.booleans()) and draw(st.booleans()),
                enabled=draw(st.integers(0, 3)) > 0,
                order=draw(st.integers(0, 5)),
                priority=draw(st.one_of(st.none(), st.integers(0, 5))),
                probability=draw(st.sampled_from([0, 50, 100, 100])),
                decorators=tuple(draw(st.lists(st.sampled_from(DECORATORS), max_size=2))),
                exclude_recursion=draw(st.booleans()),
                prevent_recursion=draw(st.booleans()),
                delay_until_recursion=draw(st.sampled_from([0, 0, 1, 2])),
                group=draw(st.sampled_from(["", "", "g1", "g2", "g1, g2"])),
                group_override=draw(st.booleans()),
                group_weight=draw(st.sampled_from([0, 50, 100])),
                sticky=draw(st.sampled_from([None, 2])),
                cooldown=draw(st.sampled_from([None, 2])),
                delay=draw(st.sampled_from([None, None, 3])),
            )
        )
    return tuple(out)


@st.composite
def turns(draw: st.DrawFn) -> tuple[ClassicTurn, ChatState]:
    books = []
    for book_id in draw(st.sampled_from([["a"], ["a", "b"], ["a", "a"]])):
        book_settings = ClassicSettings(
            scan_depth=draw(st.integers(0, 5)),
            token_budget=draw(st.integers(100, 200)),
            recursive_scanning=draw(st.booleans()),
            whole_words=draw(st.booleans()),
            case_sensitive=draw(st.booleans()),
            group_scoring=draw(st.booleans()),
            min_activations=draw(st.integers(0, 2)),
        )
        books.append(ClassicBook(book_id, book_id, draw(entries(book_id)), book_settings, "v1"))
    messages = [
        Message(draw(st.sampled_from(["user", "assistant", "system"])), " ".join(words))
        for words in draw(st.lists(st.lists(st.sampled_from(WORDS), max_size=5), max_size=6))
    ]
    length = len(messages) + draw(st.integers(0, 6))
    state: dict[str, dict[str, EntryChatState]] = {}
    for book in books:
        for e in book.entries:
            if draw(st.integers(0, 4)) == 0:
                start = draw(st.integers(0, length))
                effect = TimedEffect(start, start + 2, draw(st.booleans()))
                state.setdefault(book.id, {})[e.id] = EntryChatState(
                    sticky=effect if draw(st.booleans()) else None,
                    cooldown=effect if draw(st.booleans()) else None,
                    matched=draw(st.booleans()),
                )
    turn = ClassicTurn(
        tuple(books),
        messages,
        COUNT,
        chat_id=draw(st.sampled_from([None, "c1"])),
        chat_length=length,
        greeting_index=draw(st.sampled_from([None, 0, 1])),
        budget=draw(st.one_of(st.none(), st.integers(0, 60))),
        seed=draw(st.integers(0, 3)),
    )
    return turn, ChatState(state)


SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(turns())
def test_disabled_entries_never_appear(case: tuple[ClassicTurn, ChatState]) -> None:
    turn, state = case
    result = select(turn, state)
    disabled = {
        (e.book_id, e.id) for b in books_once(turn.books) for e in b.entries if not e.enabled
    }
    assert not disabled & {(a.book_id, a.entry_id) for a in result.activations}
    assert all(t.fate == "disabled" for t in result.trace if (t.book_id, t.entry_id) in disabled)


@SETTINGS
@given(turns())
def test_the_budget_is_never_exceeded(case: tuple[ClassicTurn, ChatState]) -> None:
    turn, state = case
    result = select(turn, state)
    assert result.used == sum(a.tokens for a in result.activations)
    assert result.used <= result.budget
    assert all(a.text and a.text == a.text.strip() for a in result.activations)


@SETTINGS
@given(turns())
def test_trace_and_order(case: tuple[ClassicTurn, ChatState]) -> None:
    turn, state = case
    result = select(turn, state)
    expected = [(b.id, e.id) for b in books_once(turn.books) for e in b.entries]
    assert [(t.book_id, t.entry_id) for t in result.trace] == expected
    injected = {(t.book_id, t.entry_id) for t in result.trace if t.fate == "injected"}
    assert injected == {(a.book_id, a.entry_id) for a in result.activations}
    keys = [(-a.order, -a.priority) for a in result.activations]
    assert keys == sorted(keys)  # rule 26 (ids break the remaining ties)


@SETTINGS
@given(turns())
def test_the_same_turn_gives_the_same_selection(case: tuple[ClassicTurn, ChatState]) -> None:
    turn, state = case
    first = select(turn, state)
    assert select(turn, state) == first
    warm = ClassicMatcherCache()
    other = ClassicBook("z", "z", (ClassicEntry("z0", "z", "z", "Gondor lore", keys=("x",)),))
    select_classic(replace(turn, books=(other,)), None, warm)  # a cache with another book
    assert select_classic(turn, state, warm) == first
    assert select_classic(turn, state, warm) == first  # warm: compiled, content hits memoised


@SETTINGS
@given(turns())
def test_a_call_depends_only_on_its_inputs(case: tuple[ClassicTurn, ChatState]) -> None:
    turn, state = case
    before = copy.deepcopy(state)
    first = select(turn, state)
    select(replace(turn, seed=99, chat_length=(turn.chat_length or 0) + 2), first.state)
    assert state == before  # a preview that discards result.state leaves nothing behind
    assert select(turn, state) == first
    assert ChatState.from_json(first.state.to_json()) == first.state
