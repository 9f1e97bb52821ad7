"""Macros in lore (ADR 0012): every form, stable draws, and what is left as written."""

from __future__ import annotations

import pytest

from worldbook.core.macros import MacroNames, has_macros, substitute

ARI = MacroNames(char="Sakana", user="Ari", chat="chat-1")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Loving {{user}}", "Loving Ari"),
        ("{{char}} swims.", "Sakana swims."),
        ("{{Char}} and {{USER}}", "Sakana and Ari"),
        ("{{ user }} meets {{ char }}", "Ari meets Sakana"),
        ("<USER> greets <BOT>.", "Ari greets Sakana."),
        ("<user> and <Char>", "Ari and Sakana"),
        ("line{{newline}}next", "line\nnext"),
        ("a{{noop}}b", "ab"),
        ("Lore.{{// the author's note }} More.", "Lore. More."),
    ],
)
def test_name_and_simple_macros(text: str, expected: str) -> None:
    out = substitute(text, ARI)
    assert out.text == expected and out.missing == frozenset()


def test_unknown_and_clock_macros_are_left_as_written() -> None:
    text = "At {{time}} on {{date}} ({{weekday}}), {{getvar::mood}} and {{nonsense}}."
    assert substitute(text, ARI).text == text


def test_without_a_name_the_macro_stays_and_is_reported() -> None:
    out = substitute("{{user}} and {{char}} and <BOT>", MacroNames(char=None, user="Ari"))
    assert out.text == "Ari and {{char}} and <BOT>"
    assert out.missing == frozenset({"char"})


@pytest.mark.parametrize(
    "form",
    [
        "{{random::red::green::blue}}",
        "{{random:red, green, blue}}",
        "{{pick::red::green::blue}}",
        "{{pick:red,green,blue}}",
    ],
)
def test_random_and_pick_draw_stably_per_chat(form: str) -> None:
    text = f"The door is {form}."
    first = substitute(text, ARI, key="e1.lore").text
    assert first in {f"The door is {c}." for c in ("red", "green", "blue")}
    assert all(substitute(text, ARI, key="e1.lore").text == first for _ in range(20))
    other_chats = {
        substitute(text, MacroNames("Sakana", "Ari", f"chat-{i}"), key="e1.lore").text
        for i in range(40)
    }
    assert len(other_chats) == 3  # other chats do draw other options


def test_two_macros_in_one_text_draw_independently() -> None:
    text = " ".join("{{pick::a::b::c::d::e::f}}" for _ in range(12))
    words = substitute(text, ARI, key="k").text.split()
    assert len(set(words)) > 1


def test_texts_without_macros_are_returned_untouched() -> None:
    plain = "No macros here, only {braces} and <tags>."
    assert not has_macros(plain)
    assert substitute(plain, ARI).text is plain


def test_the_key_separates_names_and_chats() -> None:
    assert MacroNames("A", "B", "c").key != MacroNames("A", "B", "d").key
    assert MacroNames("A", None).key != MacroNames(None, "A").key
