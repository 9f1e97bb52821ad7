"""The living world's store contract (ADR 0006), on SQLite, PostgreSQL and in memory.

Every rule is exercised through ``record_write`` / ``undo_write`` exactly as the service calls
them: replay by call id, create-becomes-append, append-only lore, rate limits in a rolling
window, undo (with its cascade and trash), and a person's edit winning over the AI.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.concurrency import run_threads
from worldbook.adapters.store import SqlStore
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.living import (
    SEGMENT_JOIN,
    LivingLimits,
    WriteCall,
)
from worldbook.core.living_calls import CallContext, parse_call
from worldbook.core.records import now
from worldbook.core.types import BookMode
from worldbook.errors import (
    BookNotFound,
    Conflict,
    EntryNotFound,
    LimitExceeded,
    RateLimited,
    WriteNotFound,
)

LORE = "Port Vel is the pirate city of the north, built on drowned ships."
HUMAN = "The Iron Guild rules the docks and taxes every cargo twice."
LIMITS = LivingLimits()


def book_with(store: SqlStore, *titles: str, mode: BookMode = BookMode.WORLD) -> str:
    book = store.create_book(
        "owner", BookDraft(title="World", mode=mode, settings={"living_world": True})
    )
    drafts = [EntryDraft(title=t, lore=f"{HUMAN} ({t})") for t in titles]
    if drafts:
        store.add_entries(book.id, drafts)
    return book.id


def call(
    book_id: str,
    tool: str,
    call_id: str = "call-1",
    *,
    message: str = "m1",
    swipe: int | None = None,
    mode: BookMode = BookMode.WORLD,
    **arguments: object,
) -> WriteCall:
    ctx = CallContext(book_id, "chat-1", message, call_id, swipe=swipe, mode=mode)
    return parse_call(ctx, tool, arguments)


def create(book_id: str, title: str = "Port Vel", call_id: str = "c1", **kw: Any) -> WriteCall:
    lore = kw.pop("lore", LORE)
    return call(book_id, "lore_create", call_id, title=title, lore=lore, **kw)


def append(book_id: str, text: str, call_id: str = "a1", **kw: Any) -> WriteCall:
    return call(book_id, "lore_append", call_id, text=text, **kw)


def test_create_then_replay_writes_once(store: SqlStore) -> None:
    book_id = book_with(store)
    first = store.record_write(create(book_id), limits=LIMITS)
    assert (first.replayed, first.write.effect, first.write.state) == (False, "created", "live")
    entry = store.get_entry(first.write.entry_id)
    assert (entry.title, entry.lore, entry.book_id) == ("Port Vel", LORE, book_id)
    again = store.record_write(create(book_id), limits=LIMITS)
    assert again.replayed and again.write.id == first.write.id
    assert store.get_book(book_id).entry_count == 1
    assert [w.id for w in store.list_writes(book_id)] == [first.write.id]
    with pytest.raises(Conflict) as refused:
        store.record_write(create(book_id, title="Another place"), limits=LIMITS)
    assert refused.value.field == "call_id"
    # The same call id in another swipe of the message is another call.
    other = store.record_write(create(book_id, title="Salt Queen", swipe=1), limits=LIMITS)
    assert not other.replayed


def test_create_naming_an_entry_appends_to_it(store: SqlStore) -> None:
    book_id = book_with(store, "Iron Guild")
    human = store.list_entries(book_id)[0]
    fact = "The guild's masters meet under the old lighthouse."
    done = store.record_write(create(book_id, title="ＩＲＯＮ  guild", lore=fact), limits=LIMITS)
    assert (done.write.effect, done.write.entry_id) == ("appended", human.id)
    assert store.get_entry(human.id).lore == human.lore + SEGMENT_JOIN + fact
    # By an alias of the create, too.
    also = call(
        book_id,
        "lore_create",
        "c2",
        title="Dock Lords",
        lore="The guild hangs smugglers at dawn.",
        aliases=["iron guild"],
    )
    assert store.record_write(also, limits=LIMITS).write.entry_id == human.id
    assert store.get_book(book_id).entry_count == 1


def test_appends_are_segments_and_repeats_write_nothing(store: SqlStore) -> None:
    book_id = book_with(store, "Iron Guild")
    human = store.list_entries(book_id)[0]
    a = store.record_write(
        append(book_id, "Its seal is a rusted anchor.", title="iron guild"), limits=LIMITS
    )
    b = store.record_write(
        append(book_id, "Its masters are five.", "a2", entry_id=human.id), limits=LIMITS
    )
    lore = store.get_entry(human.id).lore
    assert lore == SEGMENT_JOIN.join(
        [human.lore, "Its seal is a rusted anchor.", "Its masters are five."]
    )
    same = store.record_write(
        append(book_id, "its  SEAL is a rusted anchor", "a3", title="Iron Guild"), limits=LIMITS
    )
    assert same.write.effect == "unchanged"
    assert store.get_entry(human.id).lore == lore
    # Undoing the first append leaves the person's text and the second append, verbatim.
    store.undo_write(a.write.id)
    assert store.get_entry(human.id).lore == human.lore + SEGMENT_JOIN + "Its masters are five."
    store.undo_write(b.write.id)
    assert store.get_entry(human.id).lore == human.lore
    states = {w.id: w.state for w in store.list_writes(book_id)}
    assert states[a.write.id] == states[b.write.id] == "undone"


def test_disabled_entries_are_never_written_nor_revealed(store: SqlStore) -> None:
    book_id = book_with(store, "Hidden Vault")
    hidden = store.list_entries(book_id)[0]
    store.set_enabled(book_id, [hidden.id], False)
    with pytest.raises(EntryNotFound) as by_id:
        store.record_write(append(book_id, "It holds gold.", entry_id=hidden.id), limits=LIMITS)
    with pytest.raises(EntryNotFound) as missing:
        store.record_write(append(book_id, "It holds gold.", entry_id="x" * 22), limits=LIMITS)
    assert by_id.value.message.replace(hidden.id, "x" * 22) == missing.value.message
    with pytest.raises(EntryNotFound) as by_title:
        store.record_write(
            append(book_id, "It holds gold.", "a2", title="Hidden Vault"), limits=LIMITS
        )
    with pytest.raises(EntryNotFound) as unknown:
        store.record_write(
            append(book_id, "It holds gold.", "a3", title="Nowhere Vault"), limits=LIMITS
        )
    assert by_title.value.message.replace("Hidden", "Nowhere") == unknown.value.message
    # A create naming it makes a new entry: the disabled one stays as the person left it.
    made = store.record_write(create(book_id, title="Hidden Vault", call_id="c9"), limits=LIMITS)
    assert made.write.effect == "created" and made.write.entry_id != hidden.id
    assert store.get_entry(hidden.id).lore == hidden.lore
    assert store.list_writes(book_id)[0].id == made.write.id  # refused calls left no row


def test_full_entries_refuse_appends_and_write_nothing(store: SqlStore) -> None:
    book_id = book_with(store)
    made = store.record_write(create(book_id, lore="x" * 19_990), limits=LIMITS)
    with pytest.raises(LimitExceeded) as full:
        store.record_write(
            append(book_id, "A fact that does not fit.", title="Port Vel"), limits=LIMITS
        )
    assert full.value.field == "arguments.text" and "20,000" in full.value.message
    assert store.get_entry(made.write.entry_id).lore == "x" * 19_990
    with pytest.raises(LimitExceeded) as by_create:
        store.record_write(create(book_id, call_id="c2", lore=LORE), limits=LIMITS)
    assert by_create.value.field == "arguments.lore"  # a create naming the entry is an append
    assert len(store.list_writes(book_id)) == 1


def test_undo_create_trashes_entry_and_later_appends_and_restore(store: SqlStore) -> None:
    book_id = book_with(store, "Iron Guild")
    made = store.record_write(create(book_id), limits=LIMITS)
    later = store.record_write(
        append(book_id, "Its harbor never freezes.", message="m2", title="Port Vel"),
        limits=LIMITS,
    )
    entry_id = made.write.entry_id
    outcome = store.undo_write(made.write.id)
    assert [w.id for w in outcome.undone] == [made.write.id, later.write.id]
    assert outcome.trashed_entry_id == entry_id
    assert [w.undo_reason for w in outcome.undone] == ["undo", "create_undone"]
    with pytest.raises(EntryNotFound):
        store.get_entry(entry_id)
    assert store.get_book(book_id).entry_count == 1
    trash = store.list_entry_trash(book_id)
    assert [(e.entry_id, e.draft.lore) for e in trash] == [(entry_id, LORE)]
    assert store.undo_write(made.write.id).already_undone
    restored = store.restore_entry(entry_id)
    assert (restored.id, restored.title, restored.lore) == (entry_id, "Port Vel", LORE)
    assert store.get_book(book_id).entry_count == 2
    assert [e.id for e in store.list_entries(book_id)][-1] == entry_id
    assert store.list_entry_trash(book_id) == []
    assert store.get_write(made.write.id).state == "undone"  # restoring is a person's act
    with pytest.raises(EntryNotFound):
        store.restore_entry(entry_id)


def test_a_person_edit_wins(store: SqlStore) -> None:
    book_id = book_with(store)
    made = store.record_write(create(book_id), limits=LIMITS)
    entry_id = made.write.entry_id
    added = store.record_write(
        append(book_id, "Its harbor never freezes.", title="Port Vel"), limits=LIMITS
    )
    store.update_entry(entry_id, aliases=["Vel"])  # not the lore: appends stay undoable
    assert store.get_write(made.write.id).state == "edited"
    assert store.get_write(added.write.id).state == "live"
    before = store.get_entry(entry_id)
    with pytest.raises(Conflict):
        store.undo_write(made.write.id)
    assert store.get_entry(entry_id) == before
    store.undo_write(added.write.id)
    assert store.get_entry(entry_id).lore == LORE
    # A person rewrites the lore: every earlier AI write to it is theirs now.
    again = store.record_write(
        append(book_id, "Its walls are coral.", "a2", title="Vel"), limits=LIMITS
    )
    store.update_entry(entry_id, lore="Port Vel, rewritten by its author. " + LORE)
    edited = store.get_entry(entry_id)
    with pytest.raises(Conflict) as refused:
        store.undo_write(again.write.id)
    assert "edited" in refused.value.message
    assert store.get_entry(entry_id) == edited
    last = store.record_write(
        append(book_id, "Its bells ring at dusk.", "a3", title="Vel"), limits=LIMITS
    )
    assert store.get_entry(entry_id).lore == edited.lore + SEGMENT_JOIN + "Its bells ring at dusk."
    assert store.get_write(again.write.id).state == "edited"
    store.undo_write(last.write.id)
    assert store.get_entry(entry_id).lore == edited.lore


def test_a_deleted_entry_leaves_nothing_to_undo(store: SqlStore) -> None:
    book_id = book_with(store)
    made = store.record_write(create(book_id), limits=LIMITS)
    store.delete_entries(book_id, [made.write.entry_id])
    assert store.get_write(made.write.id).state == "deleted"
    with pytest.raises(Conflict):
        store.undo_write(made.write.id)
    with pytest.raises(WriteNotFound):
        store.undo_write("nope")


def test_rate_limits_roll_with_the_window(store: SqlStore) -> None:
    book_id = book_with(store)
    small = LivingLimits(live_per_window=3, attempts_per_window=5)
    start = now() - timedelta(hours=30)
    for i in range(3):
        store.record_write(create(book_id, f"Place {i}", f"c{i}"), limits=small, at=start)
    with pytest.raises(RateLimited) as full:
        store.record_write(create(book_id, "Place 3", "c3"), limits=small, at=start)
    assert "at most 3 live writes in 24 hours" in full.value.message
    assert full.value.retry_after_s == 24 * 3600
    # An undone write frees its slot; the attempts still count.
    first = store.list_writes(book_id)[-1]
    store.undo_write(first.id, at=start)
    store.record_write(create(book_id, "Place 3", "c3"), limits=small, at=start)
    store.undo_write(store.list_writes(book_id)[0].id, at=start)
    store.record_write(create(book_id, "Place 4", "c4"), limits=small, at=start)
    with pytest.raises(RateLimited) as attempts:
        store.record_write(create(book_id, "Place 5", "c5"), limits=small, at=start)
    assert "attempts" in attempts.value.message
    # A replay is answered whatever the limits.
    assert store.record_write(create(book_id, "Place 4", "c4"), limits=small, at=start).replayed
    # A day later the window has rolled on.
    later = start + timedelta(hours=25)
    store.record_write(create(book_id, "Place 5", "c5"), limits=small, at=later)


def test_message_writes_by_owner_and_swipe(store: SqlStore) -> None:
    book_id = book_with(store)
    a = store.record_write(create(book_id, "Place A", "c1", swipe=0), limits=LIMITS)
    b = store.record_write(create(book_id, "Place B", "c1", swipe=1), limits=LIMITS)
    assert [w.id for w in store.message_writes("owner", "chat-1", "m1")] == [b.write.id, a.write.id]
    assert [w.id for w in store.message_writes("owner", "chat-1", "m1", 1)] == [b.write.id]
    assert store.message_writes("mallory", "chat-1", "m1") == []
    assert store.message_writes("owner", "chat-1", "m2") == []


def test_classic_books_get_keys_and_trashed_books_take_no_writes(store: SqlStore) -> None:
    book_id = book_with(store, mode=BookMode.CLASSIC)
    made = store.record_write(
        create(book_id, aliases=["Vel"], mode=BookMode.CLASSIC), limits=LIMITS
    )
    assert store.get_entry(made.write.entry_id).keys == ("Port Vel", "Vel")
    store.trash_book(book_id)
    with pytest.raises(BookNotFound):
        store.record_write(create(book_id, "Other", "c2"), limits=LIMITS)
    store.purge_book(book_id)
    assert store.list_writes(book_id) == []


@pytest.mark.slow
def test_limit_is_exact_under_concurrent_writers(store: SqlStore) -> None:
    """8 writers × 6 calls, 30 allowed: exactly 30 live writes, the rest 429, none lost."""
    book_id = book_with(store)
    outcomes: list[str] = []

    def work(i: int) -> None:
        for j in range(6):
            try:
                store.record_write(create(book_id, f"Place {i}-{j}", f"c{i}-{j}"), limits=LIMITS)
                outcomes.append("ok")
            except RateLimited:
                outcomes.append("429")

    assert run_threads(8, work) == []
    assert outcomes.count("ok") == 30 and outcomes.count("429") == 18
    assert len(store.list_writes(book_id, limit=100)) == 30
    assert store.get_book(book_id).entry_count == 30
    # The same call from 8 writers at once is written once.
    other = book_with(store)
    again: list[bool] = []
    assert (
        run_threads(
            8, lambda i: again.append(store.record_write(create(other), limits=LIMITS).replayed)
        )
        == []
    )
    assert sorted(again) == [False] + [True] * 7
    assert store.get_book(other).entry_count == 1
