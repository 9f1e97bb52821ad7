"""Every DESIGN §6 limit and every kind of bad input it lists, against the pure validators."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldbook.core import limits
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.limits import LIMITS, weighted_length
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput, LimitExceeded

LORE = "A river city of bridges and bells, older than the kingdom."


def entry(**changes: object) -> EntryDraft:
    draft = EntryDraft(title="Ashford", lore=LORE)
    for name, value in changes.items():
        setattr(draft, name, value)
    return draft


def book(**changes: object) -> BookDraft:
    draft = BookDraft(title="The Reach")
    for name, value in changes.items():
        setattr(draft, name, value)
    return draft


def test_limits_table_matches_design() -> None:
    assert (LIMITS.book_title_max, LIMITS.book_description_max) == (120, 2000)
    assert (LIMITS.tags_max, LIMITS.tag_max) == (20, 50)
    assert LIMITS.entries_per_book == 2000
    assert (LIMITS.entry_title_min, LIMITS.entry_title_max) == (2, 100)
    assert (LIMITS.lore_min, LIMITS.lore_max) == (20, 20000)
    assert (LIMITS.aliases_max, LIMITS.alias_max) == (50, 120)
    assert LIMITS.publish_min_entries == 10
    assert LIMITS.import_batch == 500
    assert LIMITS.split_text_max == 40000
    assert LIMITS.preview_message_max == 2000
    assert LIMITS.bulk_action_max == 500


def test_valid_drafts_pass() -> None:
    limits.validate_book_draft(book(description="d" * 2000, tags=["t" * 50] * 20))
    limits.validate_entry_draft(entry(title="ab", lore="x" * 20, aliases=["a" * 120] * 50))
    limits.validate_entry_draft(entry(title="t" * 100, lore="x" * 20000))


# --- book ------------------------------------------------------------------------------------


def test_book_title_121_rejected() -> None:
    with pytest.raises(LimitExceeded) as info:
        limits.validate_book_draft(book(title="t" * 121))
    assert info.value.field == "book.title"
    assert info.value.limit == "book title"
    assert "120" in info.value.message and "121" in info.value.message


def test_book_description_2001_rejected() -> None:
    with pytest.raises(LimitExceeded) as info:
        limits.validate_book_draft(book(description="d" * 2001))
    assert info.value.field == "book.description"


def test_blank_book_title_rejected() -> None:
    with pytest.raises(InvalidInput) as info:
        limits.validate_book_draft(book(title="   "))
    assert info.value.field == "book.title"


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"scan_depth": 101}, "book.settings.scan_depth"),
        ({"token_budget": 99}, "book.settings.token_budget"),
        ({"token_budget": 32_001}, "book.settings.token_budget"),
        ({"recursive_scanning": 1}, "book.settings.recursive_scanning"),
        ({"recursive": "true"}, "book.settings.recursive"),
        ({"case_sensitive": None}, "book.settings.case_sensitive"),
        ({"min_activations": -1}, "book.settings.min_activations"),
        ({"min_activations_depth_max": 1001}, "book.settings.min_activations_depth_max"),
    ],
)
def test_classic_settings_ranges(settings: dict[str, int], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        limits.validate_book_draft(book(settings=settings))
    assert info.value.field == field


def test_classic_settings_at_their_bounds_and_unknown_keys_pass() -> None:
    settings = {
        "scan_depth": 100,
        "token_budget": 32_000,
        "recursive_scanning": False,
        "whole_words": True,
        "group_scoring": True,
        "min_activations": 100,
        "min_activations_depth_max": 0,
        "my_app_flag": "kept verbatim",
    }
    limits.validate_book_draft(book(settings=settings))


def test_classic_settings_are_read_with_the_old_recursive_name() -> None:
    from worldbook.service.classic_books import classic_settings

    assert classic_settings({"recursive": True}).recursive_scanning is True
    assert (
        classic_settings({"recursive": True, "recursive_scanning": False}).recursive_scanning
        is False
    )
    read = classic_settings({"scan_depth": 7, "token_budget": 900, "whole_words": False})
    assert (read.scan_depth, read.token_budget, read.whole_words) == (7, 900, False)
    assert classic_settings({"scan_depth": "x"}).scan_depth == 2  # malformed: the default


# --- entry -----------------------------------------------------------------------------------


@pytest.mark.parametrize("title", ["A", "t" * 101])
def test_entry_title_1_or_101_rejected(title: str) -> None:
    with pytest.raises(LimitExceeded) as info:
        limits.validate_entry_draft(entry(title=title))
    assert info.value.field == "entry.title" and info.value.limit == "entry title"


@pytest.mark.parametrize("lore", ["x" * 19, "x" * 20001])
def test_lore_19_or_20001_rejected(lore: str) -> None:
    with pytest.raises(LimitExceeded) as info:
        limits.validate_entry_draft(entry(lore=lore))
    assert info.value.field == "entry.lore"
    assert f"{len(lore):,}" in info.value.actual


def test_wide_characters_count_double_for_minimums() -> None:
    limits.validate_entry_draft(
        entry(title="龍", lore="東京は日本の首都である。大き")
    )  # 1 and 14 chars
    assert weighted_length("東京") == 4 and weighted_length("ＡＢ") == 4  # full-width Latin
    with pytest.raises(LimitExceeded):
        limits.validate_entry_draft(entry(lore="東京は日本の首都"))  # 8 chars = 16 < 20


def test_wide_characters_count_single_for_maximums() -> None:
    limits.validate_entry_draft(entry(title="龍" * 100))
    with pytest.raises(LimitExceeded):
        limits.validate_entry_draft(entry(title="龍" * 101))


def test_classic_books_accept_short_lore() -> None:
    limits.validate_entry_draft(entry(lore="x"), mode=BookMode.CLASSIC)
    with pytest.raises(LimitExceeded):
        limits.validate_entry_draft(entry(lore="x"), mode=BookMode.WORLD)
    with pytest.raises(LimitExceeded):
        limits.validate_entry_draft(entry(lore="x" * 20001), mode=BookMode.CLASSIC)


# Book tags and entry aliases follow one rule: at most so many items, each at most so long.
@pytest.mark.parametrize(
    ("draft", "field", "limit"),
    [
        (book(tags=[f"tag{i}" for i in range(21)]), "book.tags", "tags"),
        (book(tags=["ok", "t" * 51]), "book.tags[1]", "tag"),
        (entry(aliases=[f"alias {i}" for i in range(51)]), "entry.aliases", "aliases per entry"),
        (entry(aliases=["ok", "a" * 121]), "entry.aliases[1]", "alias"),
    ],
    ids=["21 tags", "51-char tag", "51 aliases", "121-char alias"],
)
def test_too_many_or_too_long_list_items_rejected(
    draft: BookDraft | EntryDraft, field: str, limit: str
) -> None:
    with pytest.raises(LimitExceeded) as info:
        if isinstance(draft, BookDraft):
            limits.validate_book_draft(draft)
        else:
            limits.validate_entry_draft(draft)
    assert info.value.field == field and info.value.limit == limit


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"title": "   \t"}, "entry.title"),
        ({"aliases": ["fine", "  "]}, "entry.aliases[1]"),
        ({"lore": " " * 30}, "entry.lore"),
    ],
)
def test_whitespace_only_rejected(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        limits.validate_entry_draft(entry(**changes))
    assert info.value.field == field


@pytest.mark.parametrize("name", ["title", "lore", "comment"])
def test_nul_rejected(name: str) -> None:
    value = {"title": "Ash\x00ford", "lore": LORE + "\x00", "comment": "\x00"}[name]
    with pytest.raises(InvalidInput) as info:
        limits.validate_entry_draft(entry(**{name: value}))
    assert info.value.field == f"entry.{name}" and "NUL" in info.value.message


def test_lone_surrogate_rejected() -> None:
    bad = b"caf\xe9 au lait and more words".decode("utf-8", "surrogateescape")
    with pytest.raises(InvalidInput) as info:
        limits.validate_entry_draft(entry(lore=bad + " " * 10))
    assert info.value.field == "entry.lore" and "UTF-8" in info.value.message
    with pytest.raises(InvalidInput) as info:
        limits.validate_entry_draft(entry(aliases=["\ud800x"]))
    assert info.value.field == "entry.aliases[0]"
    with pytest.raises(InvalidInput) as info:
        limits.validate_book_draft(book(extensions={"x": ["\ud800"]}))
    assert info.value.field == "book.extensions.x[0]"


def test_entry_field_ranges() -> None:
    cases: list[tuple[dict[str, object], str]] = [
        ({"probability": 101}, "entry.probability"),
        ({"selective_logic": 4}, "entry.selective_logic"),
        ({"role": "narrator"}, "entry.role"),
        ({"scan_depth": -1}, "entry.scan_depth"),
        ({"canon": "yes"}, "entry.canon"),
    ]
    for changes, field in cases:
        with pytest.raises(InvalidInput) as info:
            limits.validate_entry_draft(entry(**changes))
        assert info.value.field == field


def test_batch_errors_name_the_index() -> None:
    drafts = [entry(), entry(), entry(), entry(title="x")]
    with pytest.raises(LimitExceeded) as info:
        limits.validate_entry_drafts(drafts)
    assert info.value.field == "entries[3].title"


# --- counts ----------------------------------------------------------------------------------


def test_2001st_entry_rejected() -> None:
    limits.check_entries_per_book(1999, 1)
    with pytest.raises(LimitExceeded) as info:
        limits.check_entries_per_book(2000, 1)
    assert info.value.limit == "entries per book" and "2,001" in info.value.actual


def test_publish_needs_10_entries() -> None:
    limits.check_publish(10)
    with pytest.raises(LimitExceeded) as info:
        limits.check_publish(9)
    assert info.value.limit == "entries required to publish"


def test_import_batch_500() -> None:
    limits.check_batch(500)
    with pytest.raises(LimitExceeded) as info:
        limits.validate_entry_drafts([entry()] * 501)
    assert info.value.limit == "import batch"


def test_text_to_split_40000() -> None:
    limits.check_split_text("x" * 40000)
    with pytest.raises(LimitExceeded) as info:
        limits.check_split_text("x" * 40001)
    assert info.value.limit == "text to split into entries"


def test_preview_message_2000() -> None:
    limits.check_preview_message("x" * 2000)
    with pytest.raises(LimitExceeded) as info:
        limits.check_preview_message("x" * 2001)
    assert info.value.limit == "preview message"


def test_bulk_action_500() -> None:
    limits.check_bulk(500)
    with pytest.raises(LimitExceeded) as info:
        limits.check_bulk(501)
    assert info.value.limit == "bulk action"


@given(st.text(min_size=0, max_size=200))
def test_weighted_length_bounds(text: str) -> None:
    assert len(text) <= weighted_length(text) <= 2 * len(text)


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=130))
def test_title_accepted_iff_within_bounds(title: str) -> None:
    ok = (
        "\x00" not in title
        and bool(title.strip())
        and len(title) <= 100
        and weighted_length(title.strip()) >= 2
    )
    try:
        limits.validate_entry_draft(entry(title=title))
    except InvalidInput:
        assert not ok
    else:
        assert ok
