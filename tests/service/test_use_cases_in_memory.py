"""The use cases (turns, library, importing) on the in-memory fakes: no SQL, FAISS or model.

These run in milliseconds and pin the service's behaviour independently of the adapters; the
same contract is exercised against SQLite and PostgreSQL by the API and integration tests.
"""

from __future__ import annotations

import json

import pytest

from tests.samples import sample_path
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.records import EntryQuery
from worldbook.core.types import Message, ModelProfile, Visibility
from worldbook.errors import BookNotFound, EntryNotFound, LimitExceeded, PermissionDenied
from worldbook.service import library
from worldbook.service.cast import BookSource, CastMember
from worldbook.service.contract import SelectionOut
from worldbook.service.importing import export, import_book
from worldbook.service.turns import lookup_entry, preview, select_turn
from worldbook.testing import InMemoryStore, fake_services

LORE = "Lore long enough to pass the twenty character minimum of an entry."
PROFILE = ModelProfile(input_window=8192, tokenizer_id="fake:words")


def _world(services_store: InMemoryStore, owner: str = "alice", n: int = 30) -> str:
    book = services_store.create_book(owner, BookDraft(title="Eldoria"))
    drafts = [EntryDraft(title=f"Topic {i}", lore=f"{LORE} Number {i}. " * 20) for i in range(n)]
    drafts.append(EntryDraft(title="Whispering Woods", lore=f"{LORE} A forest that speaks."))
    drafts.append(EntryDraft(title="Secret", lore=f"{LORE} Hidden.", enabled=False))
    services_store.add_entries(book.id, drafts)
    return book.id


def test_a_turn_on_the_fakes_names_ranks_and_traces() -> None:
    services = fake_services()
    book_id = _world(services.store)  # type: ignore[arg-type]
    services.enqueue([e.id for e in services.store.list_entries(book_id)])  # index (fake)
    result = select_turn(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        messages=[Message("user", "Take me to the Whispering Woods. Secret?")],
        profile=PROFILE,
    )
    body = result.to_json()
    titles = [e.title for e in SelectionOut.model_validate(body).injected]
    assert titles[0] == "Whispering Woods"
    assert "Secret" not in json.dumps(body)  # disabled: never anywhere, not even the trace
    assert services.store.book_turns(book_id) == 1  # usage counted (preview would not)


def test_preview_counts_nothing_and_summary_trace_is_smaller() -> None:
    services = fake_services()
    book_id = _world(services.store)  # type: ignore[arg-type]
    result = preview(
        services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        message="Tell me about Topic 3",
        profile=PROFILE,
    )
    full, summary = result.to_json("full"), result.to_json("summary")
    assert len(summary["trace"]) < len(full["trace"])  # type: ignore[arg-type]
    assert summary["trace_level"] == "summary"
    SelectionOut.model_validate(summary)
    assert services.store.book_turns(book_id) == 0


def test_preview_of_a_short_chat_is_capped_at_2000_characters() -> None:
    services = fake_services()
    book_id = _world(services.store)  # type: ignore[arg-type]
    chat = [Message("user", "x" * 1500), Message("assistant", "y" * 600)]
    with pytest.raises(LimitExceeded, match="preview message"):
        preview(
            services,
            user_id="alice",
            source=BookSource(book_ids=(book_id,)),
            messages=chat,
            profile=PROFILE,
        )


def test_cast_attachments_are_the_acting_users_unless_the_app_names_an_owner() -> None:
    services = fake_services()
    store = services.store
    alices = _world(store)  # type: ignore[arg-type]
    mallorys = _world(store, owner="mallory")  # type: ignore[arg-type]
    store.update_book(mallorys, visibility=Visibility.UNLISTED)
    library.attach(services, "mallory", mallorys, "character", "hero")  # someone else's id
    library.attach(services, "alice", alices, "character", "hero")
    hero = BookSource(characters=(CastMember("hero", "Hero"),))

    def books_of(source: BookSource) -> set[str]:
        sel = select_turn(
            services,
            user_id="alice",
            source=source,
            messages=[Message("user", "hi")],
            profile=PROFILE,
        ).selection
        return {r.book_id for r in sel.trace}

    assert books_of(hero) == {alices}  # mallory's attachment never reaches alice's turns
    owned = BookSource(characters=(CastMember("hero", "Hero", owner="mallory"),))
    assert books_of(owned) == {mallorys}  # the app says whose character this is
    assert library.attached_books(services, "alice", "character", "hero")[0].id == alices


def test_library_rules_on_the_fakes() -> None:
    services = fake_services()
    book_id = _world(services.store)  # type: ignore[arg-type]
    with pytest.raises(BookNotFound) as hidden:
        library.visible_book(services, "bob", book_id)
    with pytest.raises(BookNotFound) as missing:
        library.visible_book(services, "bob", "A" * len(book_id))
    assert str(hidden.value).replace(book_id, "A" * len(book_id)) == str(missing.value)
    services.store.update_book(book_id, visibility=Visibility.PUBLIC)
    with pytest.raises(PermissionDenied):
        library.update_book(services, "bob", book_id, {"title": "Mine now"})
    copy = library.copy_to_library(services, "bob", book_id)
    assert copy.owner_id == "bob" and copy.visibility == Visibility.PRIVATE
    entry = services.store.list_entries(copy.id)[0]
    with pytest.raises(EntryNotFound):
        library.entry_and_book(services, "carol", entry.id)


def test_lookup_never_returns_a_disabled_entry() -> None:
    services = fake_services()
    book_id = _world(services.store)  # type: ignore[arg-type]
    source = BookSource(book_ids=(book_id,))
    _, _, lore = lookup_entry(
        services, user_id="alice", source=source, title="whispering woods", profile=PROFILE
    )
    assert "speaks" in lore
    with pytest.raises(EntryNotFound):
        lookup_entry(services, user_id="alice", source=source, title="Secret", profile=PROFILE)


@pytest.mark.samples
def test_import_and_export_on_the_fakes() -> None:
    path = sample_path("lorebooks", "Eldoria.json")
    services = fake_services()
    result = import_book(services, owner_id="alice", data=path.read_bytes(), filename=path.name)
    assert result.entries == len(services.store.list_entries(result.book_id)) == 4
    assert set(services.queue.enqueued) >= {  # type: ignore[attr-defined]
        e.id for e in services.store.list_entries(result.book_id, EntryQuery(enabled=True))
    }
    exported = json.loads(export(services, user_id="alice", book_id=result.book_id, fmt="ccv3"))
    assert exported["spec"] == "lorebook_v3"


def test_a_new_book_version_is_built_from_what_changed() -> None:
    # ADR 0008: an edit re-reads the edited entry only; what the turn sees is exactly
    # what a full build would give (compared on a second, cold cache).
    from worldbook.service.lore_books import IndexedSource, LoreBookCache

    services = fake_services()
    store = services.store
    book_id = _world(store)  # type: ignore[arg-type]
    counter = services.token_counter()
    cache = services.lore_books

    def built(with_cache: LoreBookCache, indexed: IndexedSource | None = None) -> object:
        book = store.get_book(book_id)
        return with_cache.get(
            book,
            counter=counter,
            model_id=services.model_id,
            indexed_entries=indexed or services.indexed_entries,
        )

    built(cache)
    entries = store.list_entries(book_id)
    store.update_entry(entries[3].id, title="Renamed", lore=LORE + " Changed.")
    store.set_enabled(book_id, [entries[4].id], False)
    store.delete_entries(book_id, [entries[5].id])
    store.move_entries(book_id, [entries[9].id], to="first")
    store.add_entries(book_id, [EntryDraft(title="Brand new", lore=LORE)])
    services.enqueue([e.id for e in store.list_entries(book_id)])  # vectors change too
    incremental = built(cache)
    assert cache.incremental_builds == 1 and cache.full_builds == 1
    assert incremental == built(LoreBookCache(store))
    # Edits in place only under one index build (as a served FAISS index keeps serving its
    # build after an edit): the path that swaps just the edited entries.
    frozen = services.indexed_entries(book_id)
    built(cache, lambda _: frozen)
    store.update_entry(entries[6].id, lore=LORE + " Edited in place.")
    store.set_enabled(book_id, [entries[7].id], False)
    in_place = built(cache, lambda _: frozen)
    assert cache.incremental_builds == 2 and cache.full_builds == 1
    assert in_place == built(LoreBookCache(store), lambda _: frozen)
