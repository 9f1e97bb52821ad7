"""Chat-state features (DESIGN §3): sticky, cooldown, delay, match memory, greeting.

Turns are chained as a real chat would: each turn runs on the state the previous one returned,
with ``chat_length`` growing by two messages (a user message and a reply) per exchange.
"""

from __future__ import annotations

from tests.unit.classic.helpers import book, chat, entry, fate, ids, run
from worldbook.core.classic import ChatState, ClassicResult, EntryChatState, TimedEffect
from worldbook.core.classic.state import book_state_from_json, book_state_to_json


def _turns(b: object, texts: list[str], start: int = 2) -> list[ClassicResult]:
    """One turn per text at chat lengths start, start+2, …, each on the previous state."""
    state = ChatState()
    results = []
    for n, text in enumerate(texts):
        result = run(b, chat(text), state, chat_length=start + 2 * n)  # type: ignore[arg-type]
        results.append(result)
        state = result.state
    return results


def test_sticky_keeps_an_entry_active_for_n_messages() -> None:
    b = book(entry("s", "Gondor", sticky=3))
    first, second, third = _turns(b, ["Gondor", "nothing", "nothing"])
    assert ids(first) == ["s"]
    assert first.state.entry("b", "s").sticky == TimedEffect(2, 5)
    assert ids(second) == ["s"]  # length 4 < 5
    assert second.activations[0].cause == "sticky" and second.activations[0].via == "constant"
    assert ids(third) == []  # length 6 ≥ 5: over
    plain = book(entry("s", "Gondor"))
    assert [ids(r) for r in _turns(plain, ["Gondor", "nothing"])] == [["s"], []]


def test_sticky_skips_the_probability_draw() -> None:
    b = book(entry("s", "Gondor", sticky=10, probability=1))
    state = ChatState({"b": {"s": EntryChatState(sticky=TimedEffect(1, 11))}})
    for seed in range(10):
        assert ids(run(b, chat("x"), state, chat_length=3, seed=seed)) == ["s"]


def test_cooldown_blocks_for_n_messages() -> None:
    b = book(entry("c", "Gondor", cooldown=3))
    results = _turns(b, ["Gondor", "Gondor", "Gondor"])
    assert [ids(r) for r in results] == [["c"], [], ["c"]]
    record = fate(results[1], "c")
    assert record.fate == "cooldown"
    assert "until the chat has 5 messages (now 4)" in record.reason


def test_cooldown_starts_when_sticky_ends() -> None:
    b = book(entry("e", "Gondor", sticky=2, cooldown=3))
    results = _turns(b, ["Gondor", "x", "Gondor", "Gondor", "Gondor"])
    # length 2: activated (sticky to 4); 4: sticky over → cooldown 4..7, protected;
    # 6: still cooling; 8: free again, activated (sticky to 10); 10: cooling again.
    assert [ids(r) for r in results] == [["e"], [], [], ["e"], []]
    assert results[1].state.entry("b", "e").cooldown == TimedEffect(4, 7, protected=True)


def test_redoing_a_turn_drops_the_effects_it_set() -> None:
    b = book(entry("s", "Gondor", sticky=5))
    first = run(b, chat("Gondor"), chat_length=4)
    again = run(b, chat("nothing"), first.state, chat_length=4)  # regenerate: chat not advanced
    assert ids(again) == []
    later = run(b, chat("nothing"), first.state, chat_length=6)
    assert ids(later) == ["s"]


def test_an_edited_entry_loses_its_effects() -> None:
    b = book(entry("s", "Gondor", sticky=5, revision="r1"))
    state = run(b, chat("Gondor"), chat_length=2).state
    edited = book(entry("s", "Gondor", sticky=5, revision="r2"))
    assert ids(run(edited, chat("x"), state, chat_length=4)) == []
    assert ids(run(b, chat("x"), state, chat_length=4)) == ["s"]


def test_delay_blocks_until_the_chat_is_long_enough() -> None:
    b = book(entry("d", "Gondor", delay=4))
    assert ids(run(b, chat("Gondor"), chat_length=3)) == []
    assert fate(run(b, chat("Gondor"), chat_length=3), "d").fate == "delay"
    assert ids(run(b, chat("Gondor"), chat_length=4)) == ["d"]


def test_keep_activate_after_match() -> None:
    kept = book(entry("k", "Gondor", decorators=("@@keep_activate_after_match",)))
    results = _turns(kept, ["nothing", "Gondor", "nothing", "nothing"])
    assert [ids(r) for r in results] == [[], ["k"], ["k"], ["k"]]
    assert results[2].activations[0].cause == "kept"
    plain = book(entry("k", "Gondor"))
    assert [ids(r) for r in _turns(plain, ["Gondor", "nothing"])] == [["k"], []]


def test_dont_activate_after_match() -> None:
    once = book(entry("o", "Gondor", decorators=("@@dont_activate_after_match",)))
    results = _turns(once, ["Gondor", "Gondor", "Gondor"])
    assert [ids(r) for r in results] == [["o"], [], []]
    assert "already reached the model" in fate(results[1], "o").reason


def test_match_memory_counts_only_what_reached_the_model() -> None:
    b = book(
        entry(
            "big",
            "Gondor",
            content="w " * 20,
            priority=1,
            decorators=("@@dont_activate_after_match",),
        ),
    )
    dropped = run(b, chat("Gondor"), chat_length=2, budget=5)
    assert ids(dropped) == []
    assert ids(run(b, chat("Gondor"), dropped.state, chat_length=4)) == ["big"]


def test_is_greeting() -> None:
    b = book(entry("g", "Gondor", decorators=("@@is_greeting 1",)))
    assert ids(run(b, chat("Gondor"), greeting_index=1)) == ["g"]
    assert ids(run(b, chat("Gondor"), greeting_index=0)) == []
    unknown = run(b, chat("Gondor"))
    assert ids(unknown) == [] and "unknown" in fate(unknown, "g").reason


def test_state_json_round_trip_and_robustness() -> None:
    b = book(
        entry("s", "Gondor", sticky=3, cooldown=2, decorators=("@@keep_activate_after_match",))
    )
    state = run(b, chat("Gondor"), chat_length=2).state
    data = book_state_to_json(state.book("b"))
    assert data == {
        "s": {"sticky": {"start": 2, "end": 5}, "cooldown": {"start": 2, "end": 4}, "matched": True}
    }
    assert book_state_from_json(data) == state.book("b")
    assert ChatState.from_json(state.to_json()) == state
    assert book_state_from_json({"s": {"sticky": {"start": "x"}}, "t": 3}) == {}
    assert book_state_from_json(None) == {}


def test_a_preview_discards_the_state_and_changes_nothing() -> None:
    b = book(entry("s", "Gondor", sticky=3))
    state = ChatState({"other": {"e": EntryChatState(matched=True)}})
    result = run(b, chat("Gondor"), state, chat_length=2)
    assert state.book("b") == {}  # the input is untouched (frozen data)
    assert result.state.entry("other", "e").matched  # books not in the turn are kept
    assert result.state.entry("b", "s").sticky is not None


def test_deleted_entries_lose_their_state() -> None:
    state = ChatState({"b": {"gone": EntryChatState(sticky=TimedEffect(1, 9))}})
    result = run(book(entry("e", "Gondor")), chat("x"), state, chat_length=3)
    assert result.state.book("b") == {}
