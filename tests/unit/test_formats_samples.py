"""Every real sample imports with its SOURCES.md count, exports, and re-imports unchanged."""

from __future__ import annotations

from operator import attrgetter

import pytest

from tests.unit._formats_helpers import needs_samples, sample
from worldbook.adapters.formats import export_book, parse_book
from worldbook.core.drafts import EntryDraft
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput

pytestmark = [needs_samples, pytest.mark.samples]

# file, format, entries per SOURCES.md
COUNTS = [
    ("Eldoria.json", "sillytavern", 4),
    ("default_Seraphina.png", "ccv2_png", 4),
    ("contest_Assistant_Sakana.png", "ccv2_png", 14),
    ("注入测试世界书.json", "sillytavern", 13),
    ("white_samurai.scenario", "novelai_scenario", 19),
]


@pytest.mark.parametrize("mode", list(BookMode))
@pytest.mark.parametrize(("name", "fmt", "count"), COUNTS)
def test_sample_imports_with_its_entry_count(
    name: str, fmt: str, count: int, mode: BookMode
) -> None:
    result = parse_book(sample(name), mode=mode, filename=name)
    assert result.format == fmt
    assert len(result.entries) + result.skipped == count
    assert result.skipped == 0  # every sample's lore is over the minimum
    assert all(e.lore and e.title for e in result.entries)
    assert result.book.mode is mode


def test_card_without_book_says_so() -> None:
    with pytest.raises(InvalidInput, match="no lorebook in this card"):
        parse_book(sample("contest_Assistant_Amy.png"))


def test_eldoria_world_mapping() -> None:
    result = parse_book(sample("Eldoria.json"), filename="Eldoria.json")
    assert result.book.title == "Eldoria"
    first = result.entries[0]
    # no comment in the file: the title falls back to the first key, and that is reported
    assert first.title == "eldoria"
    assert first.aliases == ["eldoria", "wood", "forest", "magical forest"]
    assert first.keys == first.aliases
    assert any("named after its first key" in w and 'entries["0"]' in w for w in result.warnings)
    assert first.extensions == {"uid": 0, "position": 0}
    assert first.lore.startswith('{{user}}: "What is Eldoria?"')


def test_chinese_sample_reads_enabled_instead_of_disable() -> None:
    result = parse_book(sample("注入测试世界书.json"), mode=BookMode.CLASSIC)
    assert result.book.title == "注入测试世界书"
    disabled = [e.title for e in result.entries if not e.enabled]
    assert len(disabled) == 1
    by_title = {e.title: e for e in result.entries}
    assert by_title["常驻-星核"].constant is True
    assert by_title["正则匹配"].keys == ["/test\\d+/"]
    assert by_title["整词匹配"].whole_words is True
    # the file's orders ascend down its list (SillyTavern: lower earlier); mirrored, ours
    # descend (higher earlier): the same arrangement
    assert [e.order for e in result.entries] == sorted(
        (e.order for e in result.entries), reverse=True
    )
    assert any(e.probability == 50 for e in result.entries)
    world = parse_book(sample("注入测试世界书.json"))
    regex_entry = next(e for e in world.entries if e.title == "正则匹配")
    assert regex_entry.aliases == []  # a regex is no literal name
    assert any("regex key" in w for w in world.warnings)
    assert next(e for e in world.entries if e.title == "常驻-星核").canon is True


def test_sakana_keeps_sillytavern_extensions() -> None:
    result = parse_book(sample("contest_Assistant_Sakana.png"), mode=BookMode.CLASSIC)
    assert result.book.title == "Sakana-WI"
    first = result.entries[0]
    assert first.title == "Programming Example"
    ext = first.extensions
    assert ext["position"] == 1 and ext["depth"] == 4 and ext["groupWeight"] == 100
    assert "display_index" not in ext and "displayIndex" not in ext  # it is the list order
    assert sum(1 for e in result.entries if e.secondary_keys and e.selective) == 4


def test_seraphina_keeps_null_probability_raw() -> None:
    result = parse_book(sample("default_Seraphina.png"))
    ext = result.entries[0].extensions
    assert ext["probability"] is None and ext["useProbability"] is False
    assert result.entries[0].probability == 100


def test_scenario_maps_novelai_fields() -> None:
    result = parse_book(sample("white_samurai.scenario"))
    assert result.book.title == "The White Samurai (1st)"
    first = result.entries[0]
    assert first.title == "Character: Yusa"
    assert first.aliases == ["Yusa", "Yusa-san"]
    assert first.order == 200 - 400  # contextConfig.budgetPriority, mirrored
    assert first.priority == 400  # and what the budget keeps first
    assert result.book.settings == {"whole_words": False}  # NovelAI matches inside words
    assert first.extensions["novelai"]["searchRange"] == 2000
    assert first.extensions["novelai"]["contextConfig"]["tokenBudget"] == 2048
    assert result.book.extensions["novelai"]["settings"] == {"orderByKeyLocations": False}


_KEPT = attrgetter(
    "title",
    "aliases",
    "lore",
    "canon",
    "enabled",
    "order",
    "comment",
    "keys",
    "secondary_keys",
    "selective",
    "selective_logic",
    "constant",
    "probability",
    "role",
    "whole_words",
    "case_sensitive",
    "scan_depth",
    "decorators",
)


def essence(entry: EntryDraft) -> tuple[object, ...]:
    """What a round trip must keep of an entry (its extensions are compared apart)."""
    return tuple(_KEPT(entry))


# Fields a target format needs although the source had none (SillyTavern entries need a uid and
# a position); anything else must come back exactly.
ADDED_BY_TARGET = {"sillytavern": {"uid", "position"}, "ccv3": set()}
NATIVE = {("Eldoria.json", "sillytavern"), ("注入测试世界书.json", "sillytavern")}


@pytest.mark.parametrize("mode", list(BookMode))
@pytest.mark.parametrize("target", ["sillytavern", "ccv3"])
@pytest.mark.parametrize("name", [c[0] for c in COUNTS])
def test_round_trip(name: str, target: str, mode: BookMode) -> None:
    first = parse_book(sample(name), mode=mode, filename=name)
    exported = export_book(first.book, first.entries, target)  # type: ignore[arg-type]
    second = parse_book(exported, mode=mode)
    assert second.format == ("sillytavern" if target == "sillytavern" else "lorebook_v3")
    assert second.book.title == first.book.title
    assert second.book.description == first.book.description
    assert second.book.settings == first.book.settings
    assert second.book.extensions == first.book.extensions
    assert [essence(e) for e in second.entries] == [essence(e) for e in first.entries]
    for a, b in zip(first.entries, second.entries, strict=True):
        added = set(b.extensions) - set(a.extensions)
        assert added <= ADDED_BY_TARGET[target], (a.title, added)
        assert {k: b.extensions[k] for k in a.extensions} == a.extensions
        if (name, target) in NATIVE:
            assert b.extensions == a.extensions
    # and a second trip changes nothing at all
    third = parse_book(export_book(second.book, second.entries, target), mode=mode)  # type: ignore[arg-type]
    assert [(essence(e), e.extensions) for e in third.entries] == [
        (essence(e), e.extensions) for e in second.entries
    ]
    assert third.book.extensions == second.book.extensions


def test_sillytavern_export_has_the_shape_sillytavern_imports() -> None:
    """ST's /import needs an `entries` object; the editor keys entries by their uid string."""
    import json

    first = parse_book(sample("contest_Assistant_Sakana.png"), mode=BookMode.CLASSIC)
    body = json.loads(export_book(first.book, first.entries, "sillytavern"))
    assert isinstance(body["entries"], dict)
    for key, entry in body["entries"].items():
        assert key == str(entry["uid"])
        assert isinstance(entry["key"], list) and isinstance(entry["content"], str)
        assert isinstance(entry["disable"], bool) and isinstance(entry["order"], int)
        assert entry["position"] == 1  # from the card's extensions.position
    assert [e["displayIndex"] for e in body["entries"].values()] == list(range(14))
