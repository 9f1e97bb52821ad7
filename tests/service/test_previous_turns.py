"""What a chat's previous turns selected, as referents of the next turn (ADR 0021): read from
the request log with the referents' fade, nothing without a chat id or with the setting off,
and a follow-up that names nothing lifts the entry whose lore names what came before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service.test_aligned_view import QUEEN, SISTER, _book, _injected, _services
from tests.service.test_diverse_hits import _scores
from worldbook.core.referents import earlier_selections, merged
from worldbook.core.types import Message, ModelProfile
from worldbook.errors import StorageUnavailable
from worldbook.service.cast import BookSource
from worldbook.service.previous_turns import previous_referents
from worldbook.service.services import Services
from worldbook.service.turns import select_turn

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")


def _say(services: Services, book_id: str, chat_id: str | None, *texts: str) -> dict[str, Any]:
    messages = [Message("assistant" if i % 2 else "user", t) for i, t in enumerate(texts)]
    return select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=messages,
        profile=PROFILE,
        chat_id=chat_id,
    ).to_json()


def test_earlier_selections_fade_two_messages_a_turn() -> None:
    found = earlier_selections([["a", "b"], ["b", "c"]], 0.5)
    assert found == {"a": 0.25, "b": 0.25, "c": 0.0625}
    assert earlier_selections([], 0.5) == {}
    assert merged({"a": 0.2, "b": 1.0}, {"a": 0.5}) == {"a": 0.5, "b": 1.0}


def test_the_request_log_gives_the_previous_turns_selections() -> None:
    services = _services(aligned=False)
    book_id = _book(services, [QUEEN, SISTER])
    _say(services, book_id, "c1", "Who rules here? Queen Maren?")
    queen = next(e.id for e in services.books.list_entries(book_id) if e.title == "Queen Maren")
    found = previous_referents(services.chats, "alice", "c1", {book_id}, 3, 0.85)
    assert found[book_id, queen] == pytest.approx(0.85**2)
    assert all(w <= 0.85**2 for w in found.values())
    assert previous_referents(services.chats, "alice", None, {book_id}, 3, 0.85) == {}
    assert previous_referents(services.chats, "alice", "c1", {book_id}, 0, 0.85) == {}
    assert previous_referents(services.chats, "alice", "c1", {"other"}, 3, 0.85) == {}
    assert previous_referents(services.chats, "bob", "c1", {book_id}, 3, 0.85) == {}


class _Down:
    def chat_log(self, *_args: object, **_kwargs: object) -> list[object]:
        raise StorageUnavailable("the database is unavailable")


def test_an_unreachable_log_gives_no_referents() -> None:
    assert previous_referents(_Down(), "alice", "c", {"b"}, 3, 0.85) == {}  # type: ignore[arg-type]


ASKED = "Who rules the harbour city?"


def test_a_follow_up_lifts_what_the_previous_turn_was_about() -> None:
    bodies = []
    for turns in (0, 2):
        services = _services(aligned=False, referent_previous_turns=turns)
        book_id = _book(services, [QUEEN, SISTER])
        first = _say(services, book_id, "c1", ASKED)
        assert "Queen Maren" in _injected(first)  # found by meaning: nothing names her
        bodies.append(_say(services, book_id, "c1", ASKED, "The queen does.", "Her sister, then?"))
    before, after = _scores(bodies[0]), _scores(bodies[1])
    assert after["Ilse Vane"] > before["Ilse Vane"]  # lifted: her lore names the queen
    assert after["Queen Maren"] == before["Queen Maren"]  # a referent is not lifted itself
