"""The living world's use cases on the in-memory fakes: which turns get the write tools, who may
write, indexing after writes, regenerate across books, and the selection JSON contract."""

from __future__ import annotations

import pytest

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import Message, ModelProfile, Visibility
from worldbook.errors import BookNotFound, Conflict, PermissionDenied, WriteNotFound
from worldbook.ports import Store
from worldbook.service import writes
from worldbook.service.cast import BookSource
from worldbook.service.contract import SelectionOut
from worldbook.service.turns import select_turn
from worldbook.testing import InMemoryStore, fake_services

LORE = "Port Vel is the pirate city of the north, built on drowned ships."
TOOLS = ModelProfile(input_window=8192, tokenizer_id="fake:words", supports_tools=True)


def living(store: Store, owner: str = "alice", **fields: object) -> str:
    draft = BookDraft(title="Coast", settings={"living_world": True}, **fields)  # type: ignore[arg-type]
    book = store.create_book(owner, draft)
    store.add_entries(book.id, [EntryDraft(title=f"Topic {i}", lore=LORE) for i in range(10)])
    return book.id


def request(
    book_id: str, call_id: str = "c1", message: str = "m1", **args: object
) -> writes.WriteRequest:
    arguments = args or {"title": "Salt Queen", "lore": "The Salt Queen rules the south seas."}
    return writes.WriteRequest(book_id, "chat", message, call_id, "lore_create", arguments)


def test_only_the_owners_tool_turns_get_the_write_tools() -> None:
    services = fake_services()
    store = services.store
    assert isinstance(store, InMemoryStore)
    plain = store.create_book("alice", BookDraft(title="Plain")).id
    mine = living(store)
    theirs = living(store, owner="bob", visibility=Visibility.UNLISTED)
    chat = [Message("user", "Hello")]

    def turn(*ids: str, profile: ModelProfile = TOOLS, user: str = "alice") -> object:
        return select_turn(
            services, user_id=user, source=BookSource(book_ids=ids), messages=chat, profile=profile
        )

    result = turn(plain, theirs, mine)
    assert result.living_book_id == mine  # type: ignore[attr-defined]
    body = result.to_json()  # type: ignore[attr-defined]
    SelectionOut.model_validate(body)
    assert body["living_world"] == {"book_id": mine}
    assert [t["function"]["name"] for t in body["tools"]][1:] == ["lore_create", "lore_append"]
    assert turn(plain, theirs).living_book_id is None  # type: ignore[attr-defined]
    no_tools = ModelProfile(input_window=8192, tokenizer_id="fake:words", supports_tools=False)
    assert turn(mine, profile=no_tools).living_book_id is None  # type: ignore[attr-defined]
    assert "living_world" not in turn(mine, profile=no_tools).to_json()  # type: ignore[attr-defined]


def test_writes_need_the_owner_and_the_setting_and_are_indexed() -> None:
    services = fake_services(index_on_enqueue=False)
    store = services.store
    book_id = living(store, visibility=Visibility.PRIVATE)
    queue = services.queue
    written = writes.record_write(services, "alice", request(book_id))
    assert queue.enqueued == [written.write.entry_id]  # type: ignore[attr-defined]
    writes.record_write(services, "alice", request(book_id))  # a replay queues nothing
    assert len(queue.enqueued) == 1  # type: ignore[attr-defined]
    with pytest.raises(BookNotFound):
        writes.record_write(services, "bob", request(book_id, "c2"))
    store.update_book(book_id, visibility=Visibility.UNLISTED)
    with pytest.raises(PermissionDenied):
        writes.record_write(services, "bob", request(book_id, "c2"))
    with pytest.raises(WriteNotFound):
        writes.undo_write(services, "mallory", "nope")
    store.update_book(book_id, settings={})
    with pytest.raises(Conflict):
        writes.record_write(services, "alice", request(book_id, "c3"))


def test_hidden_writes_and_trashed_entries_answer_like_missing_ones() -> None:
    services = fake_services()
    book_id = living(services.store)
    made = writes.record_write(services, "alice", request(book_id)).write
    with pytest.raises(WriteNotFound) as hidden:
        writes.undo_write(services, "bob", made.id)
    with pytest.raises(WriteNotFound) as missing:
        writes.undo_write(services, "bob", "G" * len(made.id))
    assert hidden.value.message.replace(made.id, "G" * len(made.id)) == missing.value.message
    writes.undo_write(services, "alice", made.id)
    with pytest.raises(Exception) as not_yours:
        writes.restore_entry(services, "bob", made.entry_id)
    assert type(not_yours.value).__name__ == "EntryNotFound"
    assert writes.restore_entry(services, "alice", made.entry_id).title == "Salt Queen"


def test_regenerate_spans_the_callers_books_and_skips_trashed_ones() -> None:
    services = fake_services()
    store = services.store
    first, second, trashed = living(store), living(store), living(store)
    for i, book_id in enumerate((first, second, trashed)):
        writes.record_write(services, "alice", request(book_id, f"c{i}"))
    other = living(store, owner="bob")
    writes.record_write(services, "bob", request(other, "c9"))
    store.trash_book(trashed)
    result = writes.undo_message(services, "alice", "chat", "m1")
    assert {w.book_id for w in result.undone} == {first, second}
    assert [(w.book_id, "trash" in why) for w, why in result.kept] == [(trashed, True)]
    assert store.list_writes(other)[0].state == "live"  # another user's book is untouched
    again = writes.undo_message(services, "alice", "chat", "m1")
    assert again.undone == [] and len(again.kept) == 1
