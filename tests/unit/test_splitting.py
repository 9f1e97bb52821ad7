"""The word-for-word splitter (docs/ai-authoring.md §4): headings, paragraphs, limits, exactness."""

from __future__ import annotations

import pytest

from worldbook.core.limits import Limits, weighted_length
from worldbook.core.splitting import Group, heading_title, split_text, units
from worldbook.errors import InvalidInput, LimitExceeded

LORE = "The harbor of Vel is deep and cold, home to the smuggler fleets."


def titles(text: str, groups: list[Group] | None = None) -> list[str]:
    return [p.title for p in split_text(text, groups).parts]


@pytest.mark.parametrize(
    ("line", "title"),
    [
        ("# The Harbor", "The Harbor"),
        ("### Guilds ###", "Guilds"),
        ("**The Tavern**", "The Tavern"),
        ("Title: Port Vel", "Port Vel"),
        ("THE IRON GUILD", "THE IRON GUILD"),
        ("ЖЕЛЕЗНАЯ ГИЛЬДИЯ", "ЖЕЛЕЗНАЯ ГИЛЬДИЯ"),
        ("THE END.", None),  # sentence punctuation: prose, not a heading
        ("#hashtag", None),  # Markdown needs a space after the #
        ("An ordinary line of prose.", None),
        ("東京", None),  # uncased scripts have no ALL-CAPS headings
    ],
)
def test_heading_lines(line: str, title: str | None) -> None:
    assert heading_title(line) == title


def test_each_heading_starts_an_entry_and_stays_in_its_lore() -> None:
    text = f"# Vel\n{LORE}\n\nIt never freezes over.\n\n# The Tavern\nThe Drowned Rat serves ale.\n"
    split = split_text(text)
    assert [p.title for p in split.parts] == ["Vel", "The Tavern"]
    assert split.parts[0].lore == f"# Vel\n{LORE}\n\nIt never freezes over."
    assert split.parts[1].lore == "# The Tavern\nThe Drowned Rat serves ale."
    assert split.joined() == text


def test_setext_headings_are_headings() -> None:
    text = f"Vel\n===\n{LORE}\n\nTavern\n------\nThe Drowned Rat serves the worst ale.\n"
    assert titles(text) == ["Vel", "Tavern"]


def test_without_headings_each_paragraph_is_an_entry_titled_by_its_opening() -> None:
    text = f"{LORE}\n\nThe Drowned Rat serves the worst ale in the city.\n"
    assert titles(text) == [
        "The harbor of Vel is deep and cold, home to the smuggler…",
        "The Drowned Rat serves the worst ale in the city.",
    ]


def test_a_short_paragraph_joins_the_one_before() -> None:
    text = f"{LORE}\n\nTiny.\n\nThe Drowned Rat serves the worst ale in the city."
    split = split_text(text)
    assert split.parts[0].lore == f"{LORE}\n\nTiny."
    assert len(split.parts) == 2
    assert any("Tiny." in note and "joined" in note for note in split.notes)


def test_a_short_first_paragraph_joins_the_one_after() -> None:
    text = f"Tiny.\n\n{LORE}"
    split = split_text(text)
    assert [p.lore for p in split.parts] == [text]


def test_a_lone_heading_joins_the_section_after_it() -> None:
    text = f"# Places\n\n## The Harbor\n{LORE}"
    split = split_text(text)
    assert [(p.title, p.lore) for p in split.parts] == [("The Harbor", text)]


def test_a_long_lone_heading_also_joins_what_follows() -> None:
    text = f"# The Great Library of the Drowned Coast\n\n{LORE}"
    assert titles(text) == ["The Great Library of the Drowned Coast"]


def test_an_over_long_section_is_cut_at_paragraph_breaks_into_near_equal_parts() -> None:
    paragraph = ("The archive keeps every tide chart of the coast. " * 40).strip()
    text = "# Archive\n" + "\n\n".join([paragraph] * 20)  # ≈ 39,000 characters
    split = split_text(text)
    assert [p.title for p in split.parts] == ["Archive (1)", "Archive (2)"]
    assert all(len(p.lore) <= 20_000 for p in split.parts)
    assert all(p.lore.endswith("coast.") for p in split.parts)  # a paragraph boundary
    assert split.parts[0].separator == "\n\n"
    assert split.joined() == text


@pytest.mark.parametrize(
    ("text", "end", "separator"),
    [
        ("The archive keeps every chart. " * 1200, "chart.", " "),  # one 37,200-char paragraph
        ("東京は日本の首都であり、多くの人が住んでいます。" * 1000, "。", ""),  # 23,000, no spaces
    ],
    ids=["a long paragraph at a sentence end", "CJK without spaces after a full stop"],
)
def test_a_long_paragraph_is_cut_after_a_sentence(text: str, end: str, separator: str) -> None:
    split = split_text(text)
    assert len(split.parts) == 2
    assert split.parts[0].lore.endswith(end)
    assert split.parts[0].separator == separator
    assert split.joined() == text


def test_text_with_no_boundary_at_all_is_cut_hard_and_still_rebuilds() -> None:
    text = "x" * 39_000
    split = split_text(text)
    assert [len(p.lore) for p in split.parts] == [19_500, 19_500]
    assert split.joined() == text


def test_wide_characters_count_double_for_the_minimum() -> None:
    split = split_text("東京は日本の首都です。")  # 11 characters, weight 22
    assert len(split.parts) == 1
    with pytest.raises(InvalidInput, match="less than one entry"):
        split_text("short text")


def test_over_the_limit_is_refused_naming_it() -> None:
    with pytest.raises(LimitExceeded, match="text to split into entries"):
        split_text("a" * 40_001)


def test_a_smaller_limit_table_is_honoured() -> None:
    limits = Limits(lore_max=100, split_text_max=1000)
    text = "A sentence of some length here. " * 20
    split = split_text(text, limits=limits)
    assert all(len(p.lore) <= 100 for p in split.parts)
    assert split.joined() == text


def test_model_groups_choose_ranges_and_titles_and_the_rest_is_covered() -> None:
    paragraphs = [f"Paragraph {n} tells of the coast and its people." for n in range(1, 6)]
    text = "\n\n".join(paragraphs)
    groups = [Group(0, 1, "The Coast", ("Shore", "the coast")), Group(3, 3, "Its People")]
    split = split_text(text, groups)
    assert [p.title for p in split.parts] == [
        "The Coast",
        "Paragraph 3 tells of the coast and its people.",
        "Its People",
        "Paragraph 5 tells of the coast and its people.",
    ]
    assert split.parts[0].lore == "\n\n".join(paragraphs[:2])
    assert split.parts[0].aliases == ("Shore",)  # "the coast" repeats the title (folded)
    assert split.joined() == text


def test_repeated_titles_get_numbers() -> None:
    text = f"# Vel\n{LORE}\n\n# VEL\n{LORE}"
    assert titles(text) == ["Vel", "VEL (2)"]


def test_units_follow_paragraphs_and_headings() -> None:
    text = "  First para\nstill first.\n\n\n# Head\nBody\n"
    found = units(text)
    assert [text[u.start : u.end] for u in found] == ["First para\nstill first.", "# Head\nBody"]
    assert [u.heading for u in found] == [None, "Head"]


def test_leading_and_trailing_whitespace_are_kept_outside_the_lore() -> None:
    text = f"\n\n  {LORE}  \n\n"
    split = split_text(text)
    assert split.leading == "\n\n  "
    assert split.parts[0].lore == LORE
    assert split.parts[0].separator == "  \n\n"
    assert weighted_length(split.parts[0].lore) >= 20


def test_a_long_part_is_never_cut_into_a_piece_under_the_minimum() -> None:
    # Found by Hypothesis: the only paragraph break near the end left a 19-character piece.
    from worldbook.core.limits import Limits

    small = Limits(lore_max=300)
    head = "# The Harbor\nthe\nthe\nthe\nthe the the the the the the the the the the the\n"
    head += "the the the the harbor harbor " + "x" * 80 + "\nthe the the the the the harbor "
    head += "harbor harbor harbor "
    head += "x" * (278 - len(head))  # a 278-character section, then a 19-character one
    text = head + "\r\n\r\nTHE GUILD\nTHE GUILD\n"
    split = split_text(text, limits=small)
    assert split.joined() == text
    assert all(20 <= len(p.lore) <= 300 for p in split.parts)
