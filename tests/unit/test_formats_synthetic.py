"""Formats with no real public sample: synthetic fixtures built from formats.md's field tables.

Every fixture here is labelled synthetic: it was written for this test, not taken from a tool.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit._formats_helpers import LORE, card_png, dumps, make_png, make_zip, text_chunk
from worldbook.adapters.formats import SUPPORTED_FORMATS, export_book, parse_book
from worldbook.core.types import BookMode


def card_entry(i: int, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "keys": [f"key{i}", f"alias{i}"],
        "content": f"{LORE} ({i})",
        "extensions": {"position": 4, "depth": 2, "exclude_recursion": True, "x_custom": [i]},
        "enabled": True,
        "insertion_order": 10 * i,
        "use_regex": True,
        "id": i,
        "comment": f"Entry {i}",
    }
    entry.update(extra)
    return entry


def v3_card(book: dict[str, Any] | None) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "Synthetic", "description": "", "group_only_greetings": []}
    if book is not None:
        data["character_book"] = book
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}


BOOK = {
    "name": "Synthetic book",
    "description": "synthetic",
    "scan_depth": 5,
    "token_budget": 900,
    "recursive_scanning": True,
    "extensions": {"tool": "synthetic"},
    "entries": [card_entry(0, priority=7), card_entry(1, enabled=False, constant=True)],
}


def test_ccv3_json_with_book_synthetic() -> None:
    result = parse_book(dumps(v3_card(BOOK)), mode=BookMode.CLASSIC)
    assert result.format == "ccv3_json"
    assert result.book.title == "Synthetic book"
    assert result.book.settings == {
        "scan_depth": 5,
        "token_budget": 900,
        "recursive_scanning": True,
    }
    assert result.book.extensions == {"tool": "synthetic"}
    first, second = result.entries
    # insertion_order 0 and 10 (lower earlier) mirrored: 200 and 190 (higher earlier)
    assert first.priority == 7 and first.order == 200 and second.order == 190
    assert second.priority == 10  # no priority in the file: its insertion order
    assert first.extensions == {
        "position": 4,
        "depth": 2,
        "excludeRecursion": True,
        "x_custom": [0],
        "uid": 0,
    }
    assert second.enabled is False and second.constant is True and second.canon is False


def test_ccv3_png_prefers_ccv3_chunk_synthetic() -> None:
    old = v3_card({**BOOK, "name": "from chara"})
    new = v3_card({**BOOK, "name": "from ccv3"})
    data = make_png(text_chunk("chara", old), text_chunk("ccv3", new))
    result = parse_book(data)
    assert result.format == "ccv3_png"
    assert result.book.title == "from ccv3"


def test_broken_ccv3_chunk_falls_back_to_chara_with_warning_synthetic() -> None:
    from tests.unit._formats_helpers import chunk

    broken = chunk(b"tEXt", b"ccv3\x00!!!not base64!!!")
    result = parse_book(make_png(text_chunk("chara", v3_card(BOOK)), broken))
    assert result.book.title == "Synthetic book"
    assert any("'ccv3' chunk is damaged" in w for w in result.warnings)


def test_charx_synthetic() -> None:
    data = make_zip({"card.json": dumps(v3_card(BOOK)), "assets/icon/images/a.png": b"x"})
    result = parse_book(data)
    assert result.format == "ccv3_charx"
    assert [e.title for e in result.entries] == ["Entry 0", "Entry 1"]


def test_lorebook_v3_and_bare_character_book_synthetic() -> None:
    result = parse_book(dumps({"spec": "lorebook_v3", "data": BOOK}))
    assert result.format == "lorebook_v3" and len(result.entries) == 2
    bare = parse_book(dumps(BOOK))
    assert bare.format == "character_book" and len(bare.entries) == 2
    assert bare.entries[0].aliases == ["key0", "alias0"]


def test_card_display_index_orders_entries_synthetic() -> None:
    book = {
        "entries": [
            card_entry(0, extensions={"display_index": 2}),
            card_entry(1, extensions={"display_index": 0}),
            card_entry(2, extensions={"display_index": 1}),
        ]
    }
    result = parse_book(dumps(book))
    assert [e.title for e in result.entries] == ["Entry 1", "Entry 2", "Entry 0"]


def test_newer_spec_version_warns_synthetic() -> None:
    card = v3_card(BOOK)
    card["spec_version"] = "3.5"
    assert any("newer than 3.0" in w for w in parse_book(dumps(card)).warnings)


NOVELAI_V2 = {
    "lorebookVersion": 5,
    "entries": [
        {
            "text": LORE,
            "keys": ["Kyoto", "/kyo+to/i"],
            "displayName": "Kyoto",
            "enabled": True,
            "forceActivation": True,
            "id": "a1",
            "category": "c1",
            "contextConfig": {"budgetPriority": 250, "tokenBudget": 1},
            "searchRange": 1000,
        },
        {"text": LORE, "keys": ["Edo"], "displayName": "Edo", "enabled": False, "category": "c1"},
    ],
    "settings": {"orderByKeyLocations": False},
    "categories": [{"name": "Places", "id": "c1", "enabled": True}],
}


def test_novelai_lorebook_v5_with_categories_synthetic() -> None:
    result = parse_book(dumps(NOVELAI_V2), filename="places.lorebook")
    assert result.format == "novelai_lorebook"
    assert result.book.title == "places"
    kyoto, edo = result.entries
    assert kyoto.canon is True and kyoto.constant is True and kyoto.order == 200 - 250
    assert kyoto.aliases == ["Kyoto"] and kyoto.keys == ["Kyoto", "/kyo+to/i"]
    assert kyoto.extensions["novelai"]["category"] == "c1"
    assert edo.enabled is False and edo.order == 200 - 400 and edo.priority == 400
    assert result.book.extensions["novelai"]["categories"][0]["name"] == "Places"


def test_novelai_story_synthetic() -> None:
    story = {
        "storyContainerVersion": 1,
        "metadata": {"title": "A story", "description": "d"},
        "content": {"storyContentVersion": 6, "lorebook": NOVELAI_V2, "story": {}},
    }
    result = parse_book(dumps(story))
    assert result.format == "novelai_story" and result.book.title == "A story"
    assert len(result.entries) == 2


def test_agnai_synthetic() -> None:
    book = {
        "kind": "memory",
        "_id": "abc",
        "name": "Agnai book",
        "userId": "u1",
        "scanDepth": 4,
        "entries": [
            {
                "name": "The Tower",
                "entry": LORE,
                "keywords": ["tower", "spire"],
                "priority": 3,
                "weight": 9,
                "enabled": True,
                "comment": "memo",
            }
        ],
    }
    result = parse_book(dumps(book))
    assert result.format == "agnai" and result.book.title == "Agnai book"
    (entry,) = result.entries
    assert (entry.title, entry.comment, entry.priority, entry.order) == (
        "The Tower",
        "memo",
        3,
        200 - 9,
    )
    assert result.book.settings == {"scan_depth": 4}
    assert result.book.extensions == {"agnai": {"kind": "memory", "_id": "abc", "userId": "u1"}}


def test_risu_synthetic() -> None:
    export = {
        "type": "risu",
        "ver": 1,
        "data": [
            {"key": "", "comment": "Folder", "content": "", "mode": "folder", "secondkey": ""},
            {
                "key": "castle, keep",
                "secondkey": "night",
                "insertorder": 5,
                "comment": "Castle",
                "content": f"@@depth 3\n@@role user\n{LORE}",
                "mode": "normal",
                "alwaysActive": False,
                "selective": True,
                "extentions": {"risu_case_sensitive": True},
                "activationPercent": 40,
            },
        ],
    }
    result = parse_book(dumps(export))
    assert result.format == "risu" and result.skipped == 1
    assert any("folder record" in w for w in result.warnings)
    (entry,) = result.entries
    assert entry.keys == ["castle", "keep"] and entry.secondary_keys == ["night"]
    assert entry.decorators == ["@@depth 3", "@@role user"] and entry.lore == LORE
    assert entry.case_sensitive is True and entry.probability == 40 and entry.order == 200 - 5
    assert result.book.extensions["risu"]["folders"][0]["comment"] == "Folder"
    exported = parse_book(export_book(result.book, result.entries, "sillytavern"))
    assert exported.entries[0].decorators == entry.decorators


def test_kobold_saves_and_aidungeon_synthetic() -> None:
    classic = {
        "gamestarted": True,
        "prompt": "p",
        "worldinfo": [
            {
                "key": "sword, blade",
                "keysecondary": "",
                "content": LORE,
                "comment": "Sword",
                "folder": None,
                "selective": False,
                "constant": False,
                "uid": 7,
            },
        ],
        "wifolders_d": {},
        "wifolders_l": [],
    }
    result = parse_book(dumps(classic), filename="save.json")
    assert result.format == "kobold"
    assert result.entries[0].aliases == ["sword", "blade"]
    assert result.entries[0].extensions == {"kobold": {"folder": None, "uid": 7}}
    united = {
        "worldinfo_v2": {
            "entries": {"0": {"key": ["gem"], "keysecondary": [], "content": LORE, "title": "Gem"}},
            "folders": {},
        }
    }
    result = parse_book(dumps(united))
    assert result.format == "kobold_united" and result.entries[0].title == "Gem"
    aid = [{"keys": "river,ford", "entry": LORE, "id": "1", "hidden": False}]
    result = parse_book(dumps(aid))
    assert result.format == "aidungeon"
    assert result.entries[0].title == "river"  # no name: the first key
    assert result.entries[0].extensions == {"aidungeon": {"id": "1", "hidden": False}}


def test_supported_formats_names_every_reader() -> None:
    assert {"sillytavern", "ccv3_charx", "lorebook_v3", "agnai", "risu", "aidungeon"} <= set(
        SUPPORTED_FORMATS
    )


def test_synthetic_round_trip_across_formats() -> None:
    result = parse_book(dumps(v3_card(BOOK)), mode=BookMode.CLASSIC)
    for target in ("sillytavern", "ccv3"):
        again = parse_book(export_book(result.book, result.entries, target), mode=BookMode.CLASSIC)  # type: ignore[arg-type]
        assert [e.extensions for e in again.entries] == [e.extensions for e in result.entries]
        assert again.book.settings == result.book.settings
        assert [e.priority for e in again.entries] == [7, 10]
        assert [e.order for e in again.entries] == [200, 190]


@pytest.mark.parametrize("mode", list(BookMode))
def test_world_edits_to_aliases_and_canon_reach_the_export(mode: BookMode) -> None:
    result = parse_book(dumps(v3_card(BOOK)), mode=mode)
    entry = result.entries[0]
    entry.aliases = ["renamed"]
    entry.canon = True
    again = parse_book(export_book(result.book, result.entries, "sillytavern"), mode=mode)
    if mode is not BookMode.CLASSIC:  # world and hybrid books edit aliases and canon
        assert again.entries[0].keys == ["renamed"] and again.entries[0].canon is True
    else:
        assert again.entries[0].keys == ["key0", "alias0"] and again.entries[0].constant is False


def test_detection_ignores_the_file_name_synthetic() -> None:
    from worldbook.adapters.formats import detect_format

    data = dumps({"entries": {"0": {"uid": 0, "content": LORE, "comment": "Named"}}})
    assert detect_format(data) == "sillytavern"
    assert parse_book(data, filename="looks_like.png").format == "sillytavern"
    assert parse_book(data, filename="looks_like.png").book.title == "looks_like"


def test_unknown_export_format_is_invalid_input() -> None:
    import pytest as _pytest

    from worldbook.errors import InvalidInput

    result = parse_book(dumps(BOOK))
    with _pytest.raises(InvalidInput, match="export format"):
        export_book(result.book, result.entries, "novelai")  # type: ignore[arg-type]


def test_novelai_lorebook_in_png_synthetic() -> None:
    from tests.unit._formats_helpers import chunk

    plain = chunk(b"tEXt", b"naidata\x00" + dumps(NOVELAI_V2))
    result = parse_book(make_png(plain))
    assert result.format == "novelai_png" and len(result.entries) == 2
    encoded = parse_book(card_png("naidata", NOVELAI_V2))
    assert [e.title for e in encoded.entries] == ["Kyoto", "Edo"]
