"""What is embedded for an entry, chunking of long lore, and best-chunk aggregation."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from worldbook.core.embed_text import (
    MIN_PASSAGE_UNITS,
    WIDE_UNITS,
    best_chunk_scores,
    best_per_entry,
    chunk_entry_text,
    entry_header,
    entry_text,
    group_rows,
    passage_texts,
    split_text,
    text_units,
)
from worldbook.errors import InvalidInput


def _visible(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_header_lists_distinct_aliases_after_the_title() -> None:
    header = entry_header(" Aragorn ", ["Strider", "aragorn", "", "Elessar", "strider "])
    assert header == "Aragorn (Strider, Elessar)"


def test_header_is_the_title_when_there_are_no_aliases() -> None:
    assert entry_header("Minas Tirith") == "Minas Tirith"


def test_entry_text_is_names_then_lore() -> None:
    text = entry_text("Rivendell", ["Imladris"], "  An elven refuge in a hidden valley.  ")
    assert text == "Rivendell (Imladris)\nAn elven refuge in a hidden valley."


def test_short_entry_is_one_passage_with_its_names() -> None:
    texts = passage_texts("Rivendell", ["Imladris"], "An elven refuge.", 200)
    assert texts == ["Rivendell (Imladris)\nAn elven refuge."]


def test_long_lore_is_chunked_and_every_chunk_names_the_entry() -> None:
    lore = " ".join(
        f"Sentence number {i} tells about the harbour of Dol Amroth." for i in range(60)
    )
    texts = passage_texts("Dol Amroth", ["Swan Knights' city"], lore, 300)
    assert len(texts) > 1
    for text in texts:
        assert text.startswith("Dol Amroth (Swan Knights' city)\n")
        assert text_units(text) <= 300
        # packed at sentence boundaries: every chunk ends a sentence
        assert text.endswith(".")
    lore_parts = [t.split("\n", 1)[1] for t in texts]
    assert _visible("".join(lore_parts)) == _visible(lore)


def test_long_header_is_cut_to_a_quarter_of_the_budget() -> None:
    aliases = [f"alias number {i}" for i in range(40)]
    texts = passage_texts("Title", aliases, "word " * 400, 200)
    for text in texts:
        header = text.split("\n", 1)[0]
        assert text_units(header) <= 200 // 4
        assert text_units(text) <= 200


def test_chunk_entry_text_of_a_header_only_text_still_fits() -> None:
    texts = chunk_entry_text("x" * 500, 100)
    assert all(text_units(t) <= 100 for t in texts)
    assert "".join(texts) == "x" * 500


def test_paragraphs_are_preferred_boundaries() -> None:
    first = "First paragraph sentence one. Sentence two."
    second = "Second paragraph here. And more."
    chunks = split_text(f"{first}\n\n{second}", len(first) + 5)
    assert chunks == [first, second]


def test_wide_characters_count_more() -> None:
    assert text_units("東京") == 2 * WIDE_UNITS
    assert text_units("Tokyo") == 5
    chunks = split_text("東京は日本の首都です。" * 20, 30)
    assert all(text_units(c) <= 30 for c in chunks)
    assert _visible("".join(chunks)) == _visible("東京は日本の首都です。" * 20)


def test_too_small_budget_is_rejected() -> None:
    with pytest.raises(InvalidInput) as info:
        passage_texts("T", [], "lore", MIN_PASSAGE_UNITS - 1)
    assert info.value.field == "max_units"
    with pytest.raises(InvalidInput):
        split_text("abc", 0)


# Words of several lengths (one longer than small budgets), punctuation, wide characters.
_TEXT = st.lists(
    st.sampled_from(["abc", "xyz", " ", ".", "!", "?", "\n", "\t", "東京", "。", "éß", "x" * 70]),
    max_size=80,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=_TEXT, budget=st.integers(min_value=1, max_value=120))
def test_split_loses_nothing_and_respects_the_budget(text: str, budget: int) -> None:
    chunks = split_text(text, budget)
    assert all(c and c == c.strip() for c in chunks)
    # A single wide character may exceed a budget smaller than WIDE_UNITS; nothing else may.
    assert all(text_units(c) <= max(budget, WIDE_UNITS) for c in chunks)
    assert _visible("".join(chunks)) == _visible(text)


@settings(max_examples=100, deadline=None)
@given(
    title=st.text(min_size=1, max_size=80).filter(lambda t: t.strip() and "\n" not in t),
    lore=_TEXT,
    budget=st.integers(min_value=MIN_PASSAGE_UNITS, max_value=300),
)
def test_passages_fit_the_model(title: str, lore: str, budget: int) -> None:
    for text in passage_texts(title, [], lore, budget):
        assert text_units(text) <= budget


@settings(max_examples=60, deadline=None)
@given(
    title=st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=2, max_size=40),
    words=st.lists(st.text("abcdeé東京 .", min_size=1, max_size=30), min_size=1, max_size=200),
    max_units=st.integers(min_value=200, max_value=800),
)
def test_long_texts_are_chunked_with_the_names_on_every_chunk(
    title: str, words: list[str], max_units: int
) -> None:
    title = title.replace("\n", " ").strip() or "Ti"
    body = " ".join(words)
    assume(body.strip())
    text = f"{title}\n{body}"
    chunks = chunk_entry_text(text, max_units)
    if text_units(text) <= max_units:
        assert chunks == [text]
        return
    assert all(text_units(c) <= max_units for c in chunks)
    header = chunks[0].split("\n", 1)[0]
    # The names head every chunk, whole unless longer than a quarter of the budget.
    assert title.startswith(header) and header.strip()
    if text_units(title) <= max_units // 4:
        assert header == title
    assert all(c.startswith(header + "\n") for c in chunks)
    kept = "".join("".join(c[len(header) + 1 :].split()) for c in chunks)
    assert kept == "".join(body.split())  # nothing lost, nothing reordered


def test_entry_scores_by_its_best_chunk() -> None:
    best = best_per_entry(["a", "b", "a", "c", "b"], [0.1, 0.5, 0.7, -0.2, 0.4])
    assert best == {"a": pytest.approx(0.7), "b": pytest.approx(0.5), "c": pytest.approx(-0.2)}


def test_best_per_entry_rejects_mismatched_lengths() -> None:
    with pytest.raises(InvalidInput):
        best_per_entry(["a"], [0.1, 0.2])


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["e1", "e2", "e3", "e4"]), st.floats(-1, 1, allow_nan=False, width=32)
        ),
        min_size=1,
        max_size=30,
    )
)
def test_vectorised_best_chunk_equals_the_reference(rows: list[tuple[str, float]]) -> None:
    ids = [r[0] for r in rows]
    scores = np.array([r[1] for r in rows], dtype=np.float32)
    order, entries, starts = group_rows(ids)
    grouped_ids = [ids[i] for i in order]
    # rows of one entry are adjacent and in first-appearance order
    assert [e for i, e in enumerate(grouped_ids) if i == 0 or grouped_ids[i - 1] != e] == entries
    best = best_chunk_scores(scores[order], starts)
    expected = best_per_entry(ids, scores.tolist())
    assert dict(zip(entries, best.tolist(), strict=True)) == pytest.approx(expected)
