"""Split invariants (docs/ai-authoring.md §4): exact rebuild, every entry within the limits."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldbook.core.limits import Limits, weighted_length
from worldbook.core.matching import normalize
from worldbook.core.splitting import Group, split_text, units
from worldbook.errors import InvalidInput

# Small limits so short generated texts exercise both the join and the cut paths.
SMALL = Limits(lore_min=20, lore_max=300, split_text_max=4_000, entry_title_max=40)

WORD = st.sampled_from(
    ["the", "harbor", "Vel", "ale.", "guild!", "東京は", "首都です。", "Москва", "x" * 30, "…"]
)
LINE = st.lists(WORD, min_size=1, max_size=12).map(" ".join)
HEADING = st.sampled_from(["# The Harbor", "THE GUILD", "**Tavern**", "Title: Vel", "## Vel"])
BLOCK = st.one_of(LINE, HEADING, st.lists(LINE, min_size=1, max_size=4).map("\n".join))
GAP = st.sampled_from(["\n", "\n\n", "\n \n", "\r\n\r\n", "\n\n\n"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(BLOCK, min_size=1, max_size=25))
    text = draw(st.sampled_from(["", "\n", "  "]))
    for block in blocks:
        text += block + draw(GAP)
    return text


def check(text: str, groups: list[Group] | None = None) -> None:
    split = split_text(text, groups, limits=SMALL)
    assert split.joined() == text
    assert split.parts
    seen = set()
    for part in split.parts:
        assert len(part.lore) <= SMALL.lore_max
        assert weighted_length(part.lore.strip()) >= SMALL.lore_min
        assert part.lore == part.lore.strip()
        assert not part.separator.strip()
        assert weighted_length(part.title) >= 2 and len(part.title) <= SMALL.entry_title_max
        assert normalize(part.title) not in seen
        seen.add(normalize(part.title))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_realistic_text_always_splits_exactly_within_limits(text: str) -> None:
    if weighted_length(text.strip()) < SMALL.lore_min:
        return
    check(text)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=1_500))
def test_any_text_splits_exactly_or_is_refused_clearly(text: str) -> None:
    try:
        check(text)
    except InvalidInput as exc:
        assert exc.field == "text"


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.data())
def test_any_ordered_model_ranges_keep_the_text_exact(text: str, data: st.DataObject) -> None:
    if weighted_length(text.strip()) < SMALL.lore_min:
        return
    count = len(units(text))
    starts = sorted({0} | data.draw(st.sets(st.integers(0, count - 1), max_size=count)))
    titles = st.sampled_from([None, "T", "A title"])
    groups = [
        Group(a, b - 1, data.draw(titles))
        for a, b in zip(starts, [*starts[1:], count], strict=True)
    ]
    skip = data.draw(st.booleans())
    check(text, groups[::2] if skip else groups)
