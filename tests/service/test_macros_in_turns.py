"""Lore speaks the chat's names (ADR 0012): macros filled in turns, in both engines, never in
what is stored or exported."""

from __future__ import annotations

import json

import pytest

from tests.samples import sample_path
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import BookMode, Message, ModelProfile
from worldbook.service import library
from worldbook.service.cast import BookSource, CastMember
from worldbook.service.importing import export, import_book
from worldbook.service.turns import TurnResult, lookup_entry, select_turn
from worldbook.testing import fake_services

PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")
FILLER = "Plain lore long enough for an entry, about nothing in particular. " * 12


def _turn(services, source: BookSource, text: str, **kw) -> TurnResult:  # type: ignore[no-untyped-def]
    return select_turn(
        services,
        user_id="alice",
        source=source,
        messages=[Message("user", text)],
        profile=PROFILE,
        **kw,
    )


def _texts(result: TurnResult) -> str:
    body = result.to_json()
    return json.dumps([body["injected"], body["messages"], body["index"]], ensure_ascii=False)


def _world(services, title: str, entries: list[EntryDraft], **book) -> str:  # type: ignore[no-untyped-def]
    made = services.store.create_book("alice", BookDraft(title=title, **book))
    services.store.add_entries(made.id, entries)
    return str(made.id)


def test_names_fill_lore_titles_and_literal_matching() -> None:
    services = fake_services()
    love = EntryDraft("Loving {{user}}", "{{char}} adores {{user}} and says so to <USER>.")
    book = _world(services, "Sea", [love, *(EntryDraft(f"Topic {i}", FILLER) for i in range(30))])
    source = BookSource(book_ids=(book,), characters=(CastMember("sakana", "Sakana"),))
    result = _turn(services, source, "Tell me about Loving Ari.", user_name="Ari")
    [entry] = [e for e in result.selection.injected if e.ref.entry_id]
    assert entry.ref.title == "Loving Ari" and entry.via.value == "literal"
    assert entry.text == "Sakana adores Ari and says so to Ari."
    assert entry.tokens == services.token_counter().count(entry.text)
    assert "{{" not in _texts(result)


def test_without_a_name_the_macro_stays_and_the_turn_says_so() -> None:
    services = fake_services()
    book = _world(services, "Sea", [EntryDraft("Greeting", "{{user}} is welcome here, friend.")])
    result = _turn(services, BookSource(book_ids=(book,)), "hello")
    assert result.selection.injected[0].text == "{{user}} is welcome here, friend."
    assert any("{{user}} left as written" in n and "user_name" in n for n in result.notes)


def test_in_a_group_chat_each_book_speaks_of_its_own_character() -> None:
    services = fake_services()
    one = _world(services, "Hers", [EntryDraft("Her home", "{{char}} lives by the sea.")])
    two = _world(services, "His", [EntryDraft("His home", "{{char}} lives in the hills.")])
    library.attach(services, "alice", one, "character", "c1")
    library.attach(services, "alice", two, "character", "c2")
    cast = (CastMember("c1", "Mira"), CastMember("c2", "Oren"))
    result = _turn(services, BookSource(characters=cast), "hi", user_name="Ari")
    texts = {e.ref.title: e.text for e in result.selection.injected}
    assert texts == {"Her home": "Mira lives by the sea.", "His home": "Oren lives in the hills."}


def test_the_stable_prefix_is_the_same_every_turn_of_a_chat() -> None:
    services = fake_services()
    sky = "The sky is {{random::red::green::blue::gold}} over {{user}}."
    book = _world(services, "Sky", [EntryDraft("Sky", sky, canon=True)])
    source = BookSource(book_ids=(book,))
    prefixes = {
        _turn(services, source, f"turn {i}", chat_id="chat-1", user_name="Ari").rendered.stable
        for i in range(5)
    }
    assert len(prefixes) == 1 and "{{" not in prefixes.pop()
    other_chats = {
        _turn(services, source, "x", chat_id=f"chat-{i}", user_name="Ari").rendered.stable
        for i in range(2, 30)
    }
    assert len(other_chats) > 1  # the draw is per chat, not one fixed choice


def test_classic_keys_match_through_macros() -> None:
    services = fake_services()
    sword = EntryDraft("Sword", "{{user}}'s blade, forged by {{char}}.", keys=["{{user}}'s sword"])
    book = _world(services, "Arms", [sword], mode=BookMode.CLASSIC)
    source = BookSource(book_ids=(book,), characters=(CastMember("smith", "Brann"),))
    hit = _turn(services, source, "I draw Ari's sword.", user_name="Ari")
    assert [e.text for e in hit.selection.injected] == ["Ari's blade, forged by Brann."]
    miss = _turn(services, source, "I draw Ari's sword.", user_name="Bea")
    assert miss.selection.injected == ()  # Bea's key is "Bea's sword": different names differ


def test_a_classic_edit_fills_only_the_edited_entry_again() -> None:
    # ADR 0008: the view of a new version keeps the filled entries of the unchanged
    # ones (so the matcher compiles only the edited one) and the turn sees exactly the edit.
    services = fake_services()
    drafts = [
        EntryDraft(f"Blade {i}", f"{{{{user}}}}'s blade {i}.", keys=[f"{{{{user}}}}'s blade {i}"])
        for i in range(6)
    ]
    book = _world(services, "Arms", drafts, mode=BookMode.CLASSIC)
    source = BookSource(book_ids=(book,))
    first = _turn(services, source, "Ari's blade 2 and Ari's blade 4", user_name="Ari")
    assert [e.text for e in first.selection.injected] == ["Ari's blade 2.", "Ari's blade 4."]
    entry = services.store.list_entries(book)[2]
    library.update_entry(services, "alice", entry.id, {"keys": ["{{user}}'s axe"]})
    second = _turn(services, source, "Ari's blade 2, then", user_name="Ari")
    assert second.selection.injected == ()  # its key is "Ari's axe" now
    third = _turn(services, source, "Ari's axe and Ari's blade 4", user_name="Ari")
    assert [e.text for e in third.selection.injected] == ["Ari's blade 2.", "Ari's blade 4."]
    assert services.classic_matchers.incremental_builds == 1  # one edit, one new version
    assert services.classic_books.incremental_builds == 1


def test_lookup_finds_the_title_as_the_turn_showed_it() -> None:
    services = fake_services()
    book = _world(services, "Sea", [EntryDraft("Loving {{user}}", "All about {{user}}, truly.")])
    _, _, lore = lookup_entry(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book,)),
        title="Loving Ari",
        profile=PROFILE,
        user_name="Ari",
    )
    assert lore == "All about Ari, truly."


def test_export_writes_the_macros_back_as_imported() -> None:
    services = fake_services()
    book = _world(services, "Sea", [EntryDraft("Loving {{user}}", "{{char}} adores {{user}}.")])
    _turn(services, BookSource(book_ids=(book,)), "Loving Ari", user_name="Ari")
    for fmt in ("sillytavern", "ccv3"):
        text = export(services, user_id="alice", book_id=book, fmt=fmt).decode()
        assert "Loving {{user}}" in text and "{{char}} adores {{user}}." in text


@pytest.mark.samples
def test_the_sakana_card_selects_and_renders_with_names() -> None:
    path = sample_path("lorebooks", "contest_Assistant_Sakana.png")
    services = fake_services()
    book = import_book(services, owner_id="alice", data=path.read_bytes(), filename=path.name)
    source = BookSource(book_ids=(book.book_id,), characters=(CastMember("sakana", "Sakana"),))
    result = _turn(services, source, "魚について教えて", user_name="Ari")
    assert result.selection.injected
    texts = _texts(result)
    assert "{{user}}" not in texts and "{{char}}" not in texts and "Ari" in texts


def test_a_macro_added_or_removed_by_an_edit_is_seen_by_the_next_version() -> None:
    """The macro scan of a new book version searches only the entries that changed (ADR 0008:
    no turn pays for an edit); what it answers must still be what a full scan answers."""
    from dataclasses import replace

    from worldbook.core.macros import MacroNames
    from worldbook.core.types import LoreBook, LoreEntry
    from worldbook.service.macro_books import MacroBooks

    plain = tuple(LoreEntry(f"e{i}", "b", f"Place {i}", "Plain lore.", 2) for i in range(5))
    names = MacroNames(user="Ari")
    books = MacroBooks()

    def view(entries: tuple[LoreEntry, ...], version: str) -> LoreBook:
        book = LoreBook("b", "Book", entries, version=version)
        return books.view(book, names, tokenizer_id="t", count_many=lambda t: [1] * len(t)).book

    assert view(plain, "1").entries[2].lore == "Plain lore."
    edited = (*plain[:2], replace(plain[2], lore="{{user}} was here."), *plain[3:])
    assert view(edited, "2").entries[2].lore == "Ari was here."
    assert view((*edited[:4], replace(plain[4], aliases=("{{user}}'s",))), "3").entries[
        4
    ].aliases == ("Ari's",)
    assert view(plain, "4").entries[2].lore == "Plain lore."
