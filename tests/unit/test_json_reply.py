"""Reading JSON out of model text: prose, fences, and replies cut at the output limit."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from worldbook.core.json_reply import close_truncated_json, find_json_object


def test_a_whole_object_is_read_as_is() -> None:
    assert find_json_object('  {"a": [1, 2]}  ') == {"a": [1, 2]}


def test_a_fenced_object_is_found_in_prose() -> None:
    text = 'Sure! Here it is:\n```json\n{"entries": []}\n```\nEnjoy.'
    assert find_json_object(text) == {"entries": []}


def test_the_first_decodable_object_in_prose_wins() -> None:
    assert find_json_object('Use {braces} like {"a": {"b": 2}} here') == {"a": {"b": 2}}


def test_no_object_is_none() -> None:
    assert find_json_object("no json here [1, 2]") is None
    assert find_json_object("") is None


def test_a_cut_reply_keeps_its_whole_items_only() -> None:
    cut = '{"entries": [{"t": "a", "x": [1]}, {"t": "b}"}, {"t": "Ha'
    assert close_truncated_json(cut) == {"entries": [{"t": "a", "x": [1]}, {"t": "b}"}]}


def test_a_cut_inside_the_first_item_rescues_nothing() -> None:
    assert close_truncated_json('{"entries": [{"title": "Harb') is None


def test_a_complete_object_is_returned_whole() -> None:
    assert close_truncated_json('{"a": 1} trailing') == {"a": 1}


@given(
    st.lists(st.dictionaries(st.sampled_from("abc"), st.text(max_size=8)), max_size=6), st.data()
)
def test_every_cut_point_yields_a_prefix_of_the_items(
    items: list[dict[str, str]], data: st.DataObject
) -> None:
    text = json.dumps({"entries": items})
    cut = data.draw(st.integers(0, len(text)))
    rescued = close_truncated_json(text[:cut])
    if rescued is not None:
        kept = rescued["entries"]
        assert kept == items[: len(kept)]
