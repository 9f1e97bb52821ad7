"""Imported books in classic mode select by their keys, in their author's arrangement, and the
sample books survive import → export → import with keys, logic, order and settings (DESIGN §3
items 3 and 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import pytest

from tests.unit._formats_helpers import (
    LORE,
    card_png,
    dumps,
    make_zip,
    needs_samples,
    sample,
)
from worldbook.adapters.formats import export_book, parse_book
from worldbook.core.types import BookMode, Message, ModelProfile
from worldbook.service.cast import BookSource
from worldbook.service.contract import SelectionOut
from worldbook.service.importing import import_book
from worldbook.service.services import Services
from worldbook.service.turns import TurnResult, select_turn
from worldbook.testing import fake_services

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")
HIT = "Zephyrine"  # the key of the first entry; the second's is "Quillon"


def _turn(services: Services, book_id: str, text: str) -> TurnResult:
    """Alice's real turn on one book, with one user message."""
    return select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=[Message("user", text)],
        profile=PROFILE,
    )


def _st() -> bytes:
    return dumps(
        {
            "entries": {
                "0": {"uid": 0, "key": [HIT], "comment": "First", "content": LORE, "order": 100},
                "1": {"uid": 1, "key": ["Quillon"], "comment": "Second", "content": LORE},
            }
        }
    )


def _card_book() -> dict[str, Any]:
    return {
        "name": "Book",
        "entries": [
            {
                "keys": [HIT],
                "content": LORE,
                "comment": "First",
                "insertion_order": 1,
                "enabled": True,
                "extensions": {},
            },
            {
                "keys": ["Quillon"],
                "content": LORE,
                "comment": "Second",
                "insertion_order": 2,
                "enabled": True,
                "extensions": {},
            },
        ],
    }


def _card(spec: str = "chara_card_v3") -> dict[str, Any]:
    return {
        "spec": spec,
        "spec_version": "3.0",
        "data": {"name": "C", "character_book": _card_book()},
    }


def _novelai() -> dict[str, Any]:
    return {
        "lorebookVersion": 1,
        "entries": [
            {"text": LORE, "keys": [HIT], "displayName": "First", "enabled": True},
            {"text": LORE, "keys": ["Quillon"], "displayName": "Second", "enabled": True},
        ],
    }


FILES: dict[str, Callable[[], bytes]] = {
    "sillytavern": _st,
    "ccv3_json": lambda: dumps(_card()),
    "ccv2_png": lambda: card_png("chara", _card("chara_card_v2")),
    "ccv3_png": lambda: card_png("ccv3", _card()),
    "ccv3_charx": lambda: make_zip({"card.json": dumps(_card())}),
    "lorebook_v3": lambda: dumps({"spec": "lorebook_v3", "data": _card_book()}),
    "character_book": lambda: dumps(_card_book()),
    "novelai_lorebook": lambda: dumps(_novelai()),
    "novelai_scenario": lambda: dumps({"scenarioVersion": 1, "lorebook": _novelai()}),
    "novelai_story": lambda: dumps(
        {"storyContainerVersion": 1, "metadata": {}, "content": {"lorebook": _novelai()}}
    ),
    "agnai": lambda: dumps(
        {
            "kind": "memory",
            "name": "A",
            "entries": [
                {"name": "First", "entry": LORE, "keywords": [HIT], "enabled": True},
                {"name": "Second", "entry": LORE, "keywords": ["Quillon"], "enabled": True},
            ],
        }
    ),
    "risu": lambda: dumps(
        {
            "type": "risu",
            "ver": 1,
            "data": [
                {"key": HIT, "comment": "First", "content": LORE, "mode": "normal"},
                {"key": "Quillon", "comment": "Second", "content": LORE, "mode": "normal"},
            ],
        }
    ),
    "kobold": lambda: dumps(
        {
            "gamestarted": True,
            "worldinfo": [
                {"key": HIT, "keysecondary": "", "content": LORE, "comment": "First"},
                {"key": "Quillon", "keysecondary": "", "content": LORE, "comment": "Second"},
            ],
        }
    ),
    "kobold_united": lambda: dumps(
        {
            "worldinfo_v2": {
                "entries": {
                    "0": {"key": [HIT], "keysecondary": [], "content": LORE, "title": "First"},
                    "1": {"key": ["Quillon"], "content": LORE, "title": "Second"},
                }
            }
        }
    ),
    "aidungeon": lambda: dumps(
        [
            {"keys": HIT, "entry": LORE, "name": "First"},
            {"keys": "Quillon", "entry": LORE, "name": "Second"},
        ]
    ),
}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_every_importable_format_selects_by_its_keys(fmt: str) -> None:
    services = fake_services()
    done = import_book(services, owner_id="alice", data=FILES[fmt](), mode=BookMode.CLASSIC)
    assert done.format == fmt

    def titles(text: str) -> list[str]:
        return [e.ref.title for e in _turn(services, done.book_id, text).selection.injected]

    assert titles("hello") == []
    assert titles(f"I met {HIT} today.") == ["First"]
    assert titles("I met Quillon and zephyrine.") == ["First", "Second"]  # the author's order


def test_an_imported_book_renders_in_its_authors_arrangement() -> None:
    """SillyTavern places lower order earlier; the same book renders the same way here, and
    exports back to the same numbers."""
    entries = {
        str(i): {"uid": i, "key": ["gate"], "comment": f"Order {o}", "content": LORE, "order": o}
        for i, o in enumerate((300, 100, 250, 5))
    }
    services = fake_services()
    done = import_book(
        services, owner_id="alice", data=dumps({"entries": entries}), mode=BookMode.CLASSIC
    )
    result = _turn(services, done.book_id, "the gate")
    rendered = [m.content for m in SelectionOut.model_validate(result.to_json()).messages]
    assert [e.ref.title for e in result.selection.injected] == [
        "Order 5",
        "Order 100",
        "Order 250",
        "Order 300",
    ]
    assert len(rendered) == 4 and rendered[0] == LORE
    records = services.store.list_entries(done.book_id)
    exported = export_book(
        services.store.get_book(done.book_id).to_draft(),
        [r.to_draft() for r in records],
        "sillytavern",
    )
    orders = [e["order"] for e in json.loads(exported)["entries"].values()]
    assert orders == [300, 100, 250, 5]
    assert all("priority" not in e for e in json.loads(exported)["entries"].values())


_KEPT = attrgetter(
    "title",
    "keys",
    "secondary_keys",
    "selective",
    "selective_logic",
    "constant",
    "order",
    "priority",
    "probability",
    "whole_words",
    "case_sensitive",
    "scan_depth",
    "decorators",
)


def essence(entry: Any) -> tuple[Any, ...]:
    """What a classic round trip must keep of an entry."""
    timed = {k: entry.extensions.get(k) for k in ("sticky", "cooldown", "delay", "group")}
    return (*_KEPT(entry), timed)


SAMPLE_BOOKS = (
    "Eldoria.json",
    "default_Seraphina.png",
    "contest_Assistant_Sakana.png",
    "注入测试世界书.json",
    "white_samurai.scenario",
)


@needs_samples
@pytest.mark.samples
@pytest.mark.parametrize("target", ["sillytavern", "ccv3"])
@pytest.mark.parametrize("name", SAMPLE_BOOKS)
def test_sample_round_trip_keeps_keys_logic_order_and_settings(name: str, target: str) -> None:
    first = parse_book(sample(name), mode=BookMode.CLASSIC, filename=name)
    again = parse_book(
        export_book(first.book, first.entries, target),  # type: ignore[arg-type]
        mode=BookMode.CLASSIC,
    )
    assert [essence(e) for e in again.entries] == [essence(e) for e in first.entries]
    assert again.book.settings == first.book.settings
    third = parse_book(export_book(again.book, again.entries, target), mode=BookMode.CLASSIC)  # type: ignore[arg-type]
    assert [essence(e) for e in third.entries] == [essence(e) for e in first.entries]


@needs_samples
@pytest.mark.samples
def test_a_sample_book_selects_by_its_keys() -> None:
    services = fake_services()
    done = import_book(
        services, owner_id="alice", data=sample("Eldoria.json"), mode=BookMode.CLASSIC
    )
    result = _turn(services, done.book_id, "Tell me about the magical forest.")
    assert [e.ref.title for e in result.selection.injected] == ["eldoria"]
    assert result.selection.injected[0].via.value == "keyword"
