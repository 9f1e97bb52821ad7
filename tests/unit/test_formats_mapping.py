"""Fix-and-warn rules of the import mapping (DESIGN §6), on synthetic books."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit._formats_helpers import LORE, dumps
from worldbook.adapters.formats import export_book, parse_book
from worldbook.adapters.formats.decorators import join_decorators, split_decorators
from worldbook.adapters.formats.mapping import ImportedBook, split_lore, weighted_len
from worldbook.core.types import BookMode


def st_book(*entries: dict[str, Any], **top: Any) -> bytes:
    """A synthetic SillyTavern book; uid = position unless given."""
    body = {str(i): {"uid": i, **e} for i, e in enumerate(entries)}
    return dumps({"entries": body, **top})


def imported(*entries: dict[str, Any], mode: BookMode = BookMode.WORLD) -> ImportedBook:
    return parse_book(st_book(*entries), mode=mode)


def test_display_index_then_uid_orders_the_list() -> None:
    result = imported(
        {"comment": "Cc", "content": LORE, "displayIndex": 5},
        {"comment": "Aa", "content": LORE, "displayIndex": 1},
        {"comment": "Bb", "content": LORE},  # no displayIndex: falls back to uid 2
    )
    assert [e.title for e in result.entries] == ["Aa", "Bb", "Cc"]


def test_long_title_is_shortened_and_kept_in_comment() -> None:
    title = "word " * 40
    result = imported({"comment": title, "content": LORE})
    entry = result.entries[0]
    assert len(entry.title) <= 100 and entry.title.endswith("…")
    assert entry.comment == title
    assert any("title shortened" in w for w in result.warnings)


def test_short_title_falls_back_and_warns() -> None:
    result = imported({"comment": "X", "key": ["dragon"], "content": LORE})
    assert result.entries[0].title == "dragon"
    assert any("under 2 characters" in w for w in result.warnings)
    lore_only = imported({"comment": "", "key": [], "content": "Opening words here.\n" + LORE})
    assert lore_only.entries[0].title == "Opening words here."
    wide = imported({"comment": "龙", "content": LORE})  # one wide character counts as two
    assert wide.entries[0].title == "龙"


def test_aliases_are_deduplicated_and_cut_to_limits() -> None:
    keys = ["Sword", "sword", "  ", "x" * 121, *[f"k{i}" for i in range(60)]]
    result = imported({"comment": "Blade", "key": keys, "content": LORE})
    entry = result.entries[0]
    assert entry.aliases[0] == "Sword" and "sword" not in entry.aliases
    assert len(entry.aliases) == 50 and all(len(a) <= 120 for a in entry.aliases)
    assert "  " not in entry.keys and "x" * 121 in entry.keys  # keys stay for the export
    text = " ".join(result.warnings)
    assert "whitespace-only key" in text and "longer than 120" in text and "cut to 50" in text


def test_world_mode_skips_short_lore_counting_wide_characters() -> None:
    result = imported(
        {"comment": "Short", "content": "too short"},
        {"comment": "Wide", "content": "十个汉字说得一样多吧"},  # 10 wide = 20: kept
        {"comment": "Narrow", "content": "九个汉字说得一样多"},  # 9 wide = 18: skipped
    )
    assert [e.title for e in result.entries] == ["Wide"]
    assert result.skipped == 2
    assert sum("skipped" in w for w in result.warnings) == 2
    assert any('"0"' in w and "'Short'" in w for w in result.warnings)


def test_classic_mode_accepts_short_lore_but_not_empty() -> None:
    result = imported(
        {"comment": "Short", "content": "x"},
        {"comment": "Empty", "content": "   "},
        mode=BookMode.CLASSIC,
    )
    assert [e.title for e in result.entries] == ["Short"]
    assert result.skipped == 1 and result.entries[0].aliases == []
    assert result.entries[0].canon is False


def test_long_lore_is_split_into_numbered_parts() -> None:
    lore = ("A sentence of lore that goes on. " * 40 + "\n\n") * 40  # ~53,000 chars
    result = imported({"comment": "Atlas", "key": ["atlas"], "content": lore})
    titles = [e.title for e in result.entries]
    assert titles == [f"Atlas ({i})" for i in range(1, len(titles) + 1)] and len(titles) == 3
    assert "".join(e.lore for e in result.entries) == lore
    assert all(len(e.lore) <= 20_000 for e in result.entries)
    assert all(e.aliases == ["atlas"] for e in result.entries)
    assert any("split into 3 entries" in w for w in result.warnings)
    assert "uid" in result.entries[0].extensions and "uid" not in result.entries[1].extensions


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=0, max_size=300), st.integers(min_value=20, max_value=80))
def test_split_lore_is_lossless_and_bounded(text: str, size: int) -> None:
    parts = split_lore(text, size)
    assert "".join(parts) == text
    assert all(len(p) <= size for p in parts)
    if len(parts) > 1:
        assert all(len(p) >= size // 4 for p in parts)


def test_nul_characters_are_stripped_with_a_warning() -> None:
    result = imported({"comment": "Na\x00me", "key": ["a\x00b"], "content": LORE + "\x00"})
    entry = result.entries[0]
    assert (entry.title, entry.keys, entry.lore) == ("Name", ["ab"], LORE)
    assert any("3 NUL" in w for w in result.warnings)


def test_decorators_are_split_kept_and_exported() -> None:
    content = "@@depth 4\n@@@role assistant\n" + LORE
    result = imported({"comment": "Deco", "content": content}, mode=BookMode.CLASSIC)
    entry = result.entries[0]
    assert entry.decorators == ["@@depth 4", "@@@role assistant"] and entry.lore == LORE
    body = export_book(result.book, result.entries, "sillytavern").decode()
    assert "@@depth 4\\n@@@role assistant\\n" in body


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.text(alphabet="ab @\n", max_size=8).map(lambda s: "@@" + s.replace("\n", "")), max_size=4
    ),
    st.text(max_size=40),
)
def test_decorator_split_inverts_join(lines: list[str], lore: str) -> None:
    if lines and lore.startswith("@@"):
        lore = " " + lore
    assert split_decorators(join_decorators(lines, lore)) == (lines, lore)


def test_constant_disabled_and_unknown_fields() -> None:
    result = imported(
        {
            "comment": "Canon",
            "content": LORE,
            "constant": True,
            "disable": True,
            "sticky": 2,
            "characterFilter": {"names": ["A"]},
            "vendorField": {"a": [1]},
        }
    )
    entry = result.entries[0]
    assert entry.canon and entry.constant and not entry.enabled
    assert entry.extensions == {
        "uid": 0,
        "sticky": 2,
        "characterFilter": {"names": ["A"]},
        "vendorField": {"a": [1]},
    }


def test_book_fields_are_fixed_and_reported() -> None:
    data = st_book(
        {"comment": "E", "content": LORE},
        name="N" * 150,
        description="d" * 2500,
        extra={"kept": True},
    )
    result = parse_book(data)
    assert len(result.book.title) <= 120 and len(result.book.description) <= 2000
    assert result.book.extensions == {"extra": {"kept": True}}
    assert sum(w.startswith("book:") for w in result.warnings) == 2


def test_weighted_len_counts_wide_and_fullwidth_twice() -> None:
    assert weighted_len("abc") == 3 and weighted_len("漢字") == 4 and weighted_len("ＡＢ") == 4
