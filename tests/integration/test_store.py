"""The store contract, run on SQLite and on the real PostgreSQL (see tests/conftest.py)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.concurrency import run_threads
from worldbook.adapters.store import SqlStore, entry_content_hash, open_store, upgrade_database
from worldbook.adapters.store.tables import metadata
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.records import BookQuery, EntryQuery, now
from worldbook.core.types import BookMode, IndexStatus, Visibility
from worldbook.errors import (
    BookNotFound,
    EntryNotFound,
    InvalidInput,
    LimitExceeded,
    NotFound,
    StorageUnavailable,
)

LORE = "Lore long enough to pass the twenty character minimum."


def drafts(n: int, prefix: str = "Entry") -> list[EntryDraft]:
    return [EntryDraft(title=f"{prefix} {i}", lore=f"{LORE} #{i}") for i in range(n)]


def fill(store: SqlStore, book_id: str, n: int, prefix: str = "Entry") -> list[str]:
    ids: list[str] = []
    all_drafts = drafts(n, prefix)
    for start in range(0, n, 500):
        ids += [e.id for e in store.add_entries(book_id, all_drafts[start : start + 500])]
    return ids


def order(store: SqlStore, book_id: str) -> list[str]:
    return [e.id for e in store.list_entries(book_id)]


# --- schema ----------------------------------------------------------------------------------


def test_migrated_schema_matches_models(empty_database_url: str) -> None:
    upgrade_database(empty_database_url)
    upgrade_database(empty_database_url)  # idempotent
    engine = sa.create_engine(empty_database_url)
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
    finally:
        engine.dispose()
    assert diff == []


def test_migration_0003_renames_recursive_and_frees_zero_priorities(
    empty_database_url: str,
) -> None:
    upgrade_database(empty_database_url, "0002")
    store = SqlStore(empty_database_url)
    try:
        book = store.create_book(
            "alice", BookDraft(title="Old", mode=BookMode.CLASSIC, settings={"recursive": True})
        )
        zero, seven = store.add_entries(
            book.id,
            [
                EntryDraft(title="Zero", lore="x", priority=0),
                EntryDraft(title="Seven", lore="y", priority=7),
            ],
        )
    finally:
        store.close()
    upgrade_database(empty_database_url)
    store = SqlStore(empty_database_url)
    try:
        assert store.get_book(book.id).settings == {"recursive_scanning": True}
        assert store.get_entry(zero.id).priority is None
        assert store.get_entry(seven.id).priority == 7
    finally:
        store.close()


# --- users and keys --------------------------------------------------------------------------


def test_api_keys(store: SqlStore) -> None:
    record, plaintext = store.create_api_key("roleplay app")
    assert plaintext.startswith(record.prefix)
    assert store.authenticate(plaintext) == record
    assert store.authenticate(plaintext + "x") is None
    assert store.authenticate("nonsense") is None
    revoked = store.revoke_api_key(record.id)
    assert revoked.revoked_at is not None
    assert store.authenticate(plaintext) is None
    assert [k.id for k in store.list_api_keys()] == [record.id]
    with pytest.raises(NotFound):
        store.revoke_api_key("missing")
    store.ensure_user("alice")
    store.ensure_user("alice")  # idempotent


# --- books -----------------------------------------------------------------------------------


def test_book_crud_trash_restore(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="The Reach", tags=["Fantasy", "maps"]))
    assert len(book.id) >= 22 and book.entry_count == 0 and book.version == 1
    assert store.get_book(book.id) == book
    updated = store.update_book(book.id, description="Rivers.", tags=["river"])
    assert updated.description == "Rivers." and updated.version > book.version
    assert [b.id for b in store.list_books(BookQuery(owner_id="alice", tag="RIVER"))] == [book.id]
    assert store.list_books(BookQuery(owner_id="alice", tag="fantasy")) == []
    assert [b.id for b in store.list_books(BookQuery(title_contains="reac"))] == [book.id]
    assert store.list_books(BookQuery(title_contains="100%")) == []
    trashed = store.trash_book(book.id)
    assert trashed.trashed
    with pytest.raises(BookNotFound):
        store.get_book(book.id)
    assert store.get_book(book.id, include_trashed=True).trashed
    assert store.list_books(BookQuery(owner_id="alice")) == []
    assert [b.id for b in store.list_books(BookQuery(owner_id="alice", trashed=True))] == [book.id]
    with pytest.raises(BookNotFound):
        store.add_entries(book.id, drafts(1))
    assert not store.restore_book(book.id).trashed
    assert [b.id for b in store.list_books(BookQuery(owner_id="alice"))] == [book.id]
    store.purge_book(book.id)
    with pytest.raises(BookNotFound):
        store.get_book(book.id, include_trashed=True)


def test_update_book_rejects_unknown_and_invalid_fields(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="The Reach"))
    with pytest.raises(InvalidInput) as info:
        store.update_book(book.id, colour="red")
    assert info.value.field == "colour"
    with pytest.raises(LimitExceeded):
        store.update_book(book.id, title="t" * 121, description="changed")
    assert store.get_book(book.id) == book  # nothing written


def test_publishing_needs_ten_entries(store: SqlStore) -> None:
    with pytest.raises(LimitExceeded):
        store.create_book("alice", BookDraft(title="Public", visibility=Visibility.PUBLIC))
    book = store.create_book("alice", BookDraft(title="Soon public"))
    fill(store, book.id, 9)
    with pytest.raises(LimitExceeded) as info:
        store.update_book(book.id, visibility=Visibility.PUBLIC)
    assert info.value.limit == "entries required to publish"
    fill(store, book.id, 1, "Tenth")
    assert store.update_book(book.id, visibility="public").visibility == Visibility.PUBLIC
    assert [b.id for b in store.list_books(BookQuery(visibility=Visibility.PUBLIC))] == [book.id]


def test_copy_book(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Original", tags=["x"], settings={"a": 1}))
    ids = fill(store, book.id, 12)
    store.move_entries(book.id, [ids[5]], to="first")
    vec = np.full((1, 4), 0.5, dtype=np.float32)
    entry = store.get_entry(ids[0])
    assert store.save_vectors(ids[0], "m", entry.content_hash, vec)
    store.update_book(book.id, visibility="public")
    copy = store.copy_book(book.id, "bob")
    assert copy.owner_id == "bob" and copy.visibility == Visibility.PRIVATE
    assert (copy.title, copy.tags, copy.settings, copy.entry_count) == (
        "Original",
        ("x",),
        {"a": 1},
        12,
    )
    originals = store.list_entries(book.id)
    copies = store.list_entries(copy.id)
    assert [e.title for e in copies] == [e.title for e in originals]
    assert not {e.id for e in copies} & set(ids)
    copied_ids, matrix, _ = store.load_book_vectors(copy.id, "m")
    assert len(copied_ids) == 1 and np.allclose(matrix, vec)


# --- entries ---------------------------------------------------------------------------------


def test_entry_crud(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Book"))
    draft = EntryDraft(
        title="Ashford",
        lore=LORE,
        aliases=["The Bell City"],
        keys=["ash"],
        comment="note",
        extensions={"st": {"uid": 3}},
    )
    [entry] = store.add_entries(book.id, [draft])
    assert entry.to_draft() == draft
    assert entry.index_status == IndexStatus.QUEUED
    assert entry.content_hash == entry_content_hash("Ashford", ["The Bell City"], LORE)
    assert store.get_entry(entry.id) == entry
    store.set_index_status([entry.id], IndexStatus.INDEXED)
    same = store.update_entry(entry.id, comment="changed note", canon=True)
    assert same.content_hash == entry.content_hash and same.index_status == IndexStatus.INDEXED
    edited = store.update_entry(entry.id, lore=LORE + " More.")
    assert edited.content_hash != entry.content_hash and edited.index_status == IndexStatus.QUEUED
    with pytest.raises(InvalidInput) as info:
        store.update_entry(entry.id, colour="red")
    assert info.value.field == "colour"
    with pytest.raises(LimitExceeded):
        store.update_entry(entry.id, title="x")
    assert store.get_entry(entry.id) == edited
    assert store.get_book(book.id).version > book.version
    assert store.delete_entries(book.id, [entry.id]) == 1
    with pytest.raises(EntryNotFound):
        store.get_entry(entry.id)
    assert store.get_book(book.id).entry_count == 0


def test_rejected_batch_writes_nothing(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Book"))
    fill(store, book.id, 3)
    before = store.get_book(book.id)
    bad = [*drafts(3, "New"), EntryDraft(title="Fine title", lore="too short")]
    with pytest.raises(LimitExceeded) as info:
        store.add_entries(book.id, bad)
    assert info.value.field == "entries[3].lore"
    assert store.get_book(book.id) == before
    assert len(store.list_entries(book.id)) == 3
    with pytest.raises(LimitExceeded):
        store.add_entries(book.id, drafts(501))
    assert len(store.list_entries(book.id)) == 3


def test_classic_books_accept_short_lore(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Classic", mode=BookMode.CLASSIC))
    [entry] = store.add_entries(book.id, [EntryDraft(title="Key", lore="x", keys=["k"])])
    assert entry.lore == "x"
    with pytest.raises(LimitExceeded) as info:  # world mode would hold a too-short entry
        store.update_book(book.id, mode=BookMode.WORLD)
    assert info.value.field == "mode" and entry.id in info.value.message
    store.update_entry(entry.id, lore=LORE)
    assert store.update_book(book.id, mode="world").mode == BookMode.WORLD


def test_ids_from_other_books_are_refused(store: SqlStore) -> None:
    mine = store.create_book("alice", BookDraft(title="Mine"))
    theirs = store.create_book("bob", BookDraft(title="Theirs"))
    [a] = fill(store, mine.id, 1)
    [b] = fill(store, theirs.id, 1)
    assert store.entry_ids_not_in_book(mine.id, [a, b, "nope"]) == [b, "nope"]
    for action in (
        lambda: store.delete_entries(mine.id, [a, b]),
        lambda: store.set_enabled(mine.id, [a, b], False),
        lambda: store.move_entries(mine.id, [a, b], to="first"),
        lambda: store.move_entries(mine.id, [a], to=("after", b)),
    ):
        with pytest.raises(EntryNotFound):
            action()
    assert store.get_entry(a).enabled and store.get_book(mine.id).entry_count == 1
    assert store.get_entries(mine.id, [a, b]) == [store.get_entry(a)]


def test_list_filters_enable_and_usage(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Book"))
    ids = fill(store, book.id, 6)
    store.update_entry(ids[0], canon=True)
    assert store.set_enabled(book.id, ids[4:], False) == 2
    assert store.set_enabled(book.id, ids[4:], False) == 0
    assert [e.id for e in store.list_entries(book.id, EntryQuery(canon=True))] == ids[:1]
    assert [e.id for e in store.list_entries(book.id, EntryQuery(enabled=False))] == ids[4:]
    assert [e.id for e in store.list_entries(book.id, EntryQuery(limit=2, offset=1))] == ids[1:3]

    store.record_turn_usage([book.id], [(ids[0], "canon"), (ids[2], "semantic"), (ids[3], "index")])
    store.record_turn_usage([book.id, book.id], [(ids[2], "full"), (ids[2], "index")])
    usage = store.entry_usage(book.id)
    assert (usage[ids[2]].total, usage[ids[2]].full, usage[ids[2]].index) == (2, 2, 0)
    assert (usage[ids[0]].canon, usage[ids[3]].index, usage[ids[1]].total) == (1, 1, 0)
    assert usage[ids[2]].last_used_at is not None
    assert store.book_turns(book.id) == 2
    assert [e.id for e in store.list_entries(book.id, EntryQuery(sort="most_used"))][:1] == [ids[2]]
    assert [e.id for e in store.list_entries(book.id, EntryQuery(never_used=True))] == [
        ids[1],
        *ids[4:],
    ]
    assert store.usage_alerts(book.id, min_turns=3) == []
    assert store.usage_alerts(book.id, min_turns=2) == [ids[1]]  # enabled, not canon, unused
    with pytest.raises(InvalidInput):
        store.record_turn_usage([book.id], [(ids[1], "teleport")])


# --- the 2,000-entry limit -------------------------------------------------------------------


@pytest.mark.slow
def test_entry_limit_exact_under_concurrent_inserts(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Big"))
    fill(store, book.id, 1950)
    errors = run_threads(10, lambda i: store.add_entries(book.id, drafts(10, f"T{i}")))
    assert len(errors) == 5 and all(isinstance(e, LimitExceeded) for e in errors)
    assert store.get_book(book.id).entry_count == 2000
    assert len(store.list_entries(book.id)) == 2000
    with pytest.raises(LimitExceeded) as info:
        store.add_entries(book.id, drafts(1, "Last"))
    assert info.value.limit == "entries per book"


# --- list order ------------------------------------------------------------------------------


def test_moves_and_inserts(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Order"))
    a, b, c, d, e = fill(store, book.id, 5)
    assert store.move_entries(book.id, [d, b], to="first") == 2
    assert order(store, book.id) == [b, d, a, c, e]
    assert store.move_entries(book.id, [b], to="last") == 1
    assert order(store, book.id) == [d, a, c, e, b]
    assert store.move_entries(book.id, [e, d], to=("before", a)) == 2
    assert order(store, book.id) == [d, e, a, c, b]
    assert store.move_entries(book.id, [d], to=("after", c)) == 1
    assert order(store, book.id) == [e, a, c, d, b]
    [f] = store.add_entries(book.id, drafts(1, "F"), position="first")
    [g] = store.add_entries(book.id, drafts(1, "G"), position=("after", a))
    assert order(store, book.id) == [f.id, e, a, g.id, c, d, b]
    with pytest.raises(InvalidInput):
        store.move_entries(book.id, [a, c], to=("after", c))
    with pytest.raises(InvalidInput):
        store.move_entries(book.id, [a], to="middle")  # type: ignore[arg-type]


def test_repeated_insert_between_renumbers_and_keeps_order(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Order"))
    first, last = fill(store, book.id, 2)
    expected = [first, last]
    for i in range(25):  # halving a 1,024 gap runs out after ~10 insertions
        [new] = store.add_entries(book.id, drafts(1, f"Wedge {i}"), position=("before", last))
        expected.insert(len(expected) - 1, new.id)
    assert order(store, book.id) == expected
    positions = [e.position for e in store.list_entries(book.id)]
    assert len(set(positions)) == len(positions)


@pytest.mark.slow
def test_bulk_moves_in_a_2000_entry_book_match_a_list_model(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Big"))
    model = fill(store, book.id, 2000)
    rng = random.Random(7)
    for step in range(12):
        moving = rng.sample(model, rng.choice([1, 3, 500]))
        rest = [i for i in model if i not in set(moving)]
        moving_in_order = [i for i in model if i in set(moving)]
        kind = step % 4
        if kind == 0:
            to: object = "first"
            model = moving_in_order + rest
        elif kind == 1:
            to = "last"
            model = rest + moving_in_order
        else:
            anchor_at = rng.randrange(len(rest))
            side = "before" if kind == 2 else "after"
            to = (side, rest[anchor_at])
            cut = anchor_at if side == "before" else anchor_at + 1
            model = rest[:cut] + moving_in_order + rest[cut:]
        written = store.move_entries(book.id, moving, to=to)  # type: ignore[arg-type]
        assert len(moving) <= written <= 2000
        assert order(store, book.id) == model
    positions = [e.position for e in store.list_entries(book.id)]
    assert len(set(positions)) == 2000


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_sql_moves_match_a_list_model(store: SqlStore, data: st.DataObject) -> None:
    book = store.create_book("alice", BookDraft(title="Model"))
    model = fill(store, book.id, data.draw(st.integers(2, 12), label="entries"))
    for _ in range(data.draw(st.integers(1, 15), label="moves")):
        moving = data.draw(st.lists(st.sampled_from(model), min_size=1, unique=True))
        rest = [i for i in model if i not in moving]
        if not rest:
            continue
        kind = data.draw(st.sampled_from(["first", "last", "before", "after", "insert"]))
        anchor = data.draw(st.sampled_from(rest))
        in_order = [i for i in model if i in moving]
        if kind == "insert":
            [new] = store.add_entries(book.id, drafts(1, "New"), position=("before", anchor))
            at = model.index(anchor)
            model = [*model[:at], new.id, *model[at:]]
        else:
            to: object = kind if kind in ("first", "last") else (kind, anchor)
            store.move_entries(book.id, moving, to=to)  # type: ignore[arg-type]
            cut = {"first": 0, "last": len(rest)}.get(kind)
            if cut is None:
                cut = rest.index(anchor) + (1 if kind == "after" else 0)
            model = rest[:cut] + in_order + rest[cut:]
        assert order(store, book.id) == model


@pytest.mark.slow
def test_concurrent_moves_keep_a_permutation(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Busy"))
    ids = fill(store, book.id, 300)

    def mover(i: int) -> None:
        rng = random.Random(i)
        for _ in range(15):
            moving = rng.sample(ids, rng.randint(1, 5))
            anchor = rng.choice([x for x in ids if x not in moving])
            to = rng.choice(["first", "last", ("before", anchor), ("after", anchor)])
            store.move_entries(book.id, moving, to=to)  # type: ignore[arg-type]

    assert run_threads(4, mover) == []
    entries = store.list_entries(book.id)
    assert sorted(e.id for e in entries) == sorted(ids)
    assert len({e.position for e in entries}) == 300


# --- attachments -----------------------------------------------------------------------------


def test_attachments_keep_order(store: SqlStore) -> None:
    one = store.create_book("alice", BookDraft(title="One"))
    two = store.create_book("alice", BookDraft(title="Two"))
    store.attach(two.id, "character", "c1", "alice")
    store.attach(one.id, "character", "c1", "alice")
    again = store.attach(two.id, "character", "c1", "alice")
    assert again.position == 1
    assert store.attachments_for("character", "c1", "alice") == [two.id, one.id]
    assert store.attachments_for("story", "c1", "alice") == []
    store.trash_book(two.id)
    assert store.attachments_for("character", "c1", "alice") == [one.id]
    assert store.detach(one.id, "character", "c1", "alice") is True
    assert store.detach(one.id, "character", "c1", "alice") is False
    with pytest.raises(InvalidInput):
        store.attach(one.id, "chat", "c1", "alice")  # type: ignore[arg-type]


def test_attachments_belong_to_the_user_who_made_them(store: SqlStore) -> None:
    # Character ids are the app's and shared by its users: one user's attachment never shows
    # in another's list, and nobody can detach another user's attachment (DESIGN §5).
    mine = store.create_book("alice", BookDraft(title="Mine"))
    theirs = store.create_book("mallory", BookDraft(title="Theirs"))
    store.attach(mine.id, "character", "hero", "alice")
    store.attach(theirs.id, "character", "hero", "mallory")
    store.attach(mine.id, "character", "hero", "mallory")  # an unlisted book, say
    assert store.attachments_for("character", "hero", "alice") == [mine.id]
    assert store.attachments_for("character", "hero", "mallory") == [theirs.id, mine.id]
    assert store.detach(mine.id, "character", "hero", "mallory") is True
    assert store.attachments_for("character", "hero", "alice") == [mine.id]


def test_entry_stamps_move_when_an_entry_changes_or_moves(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Stamps"))
    ids = [e.id for e in store.add_entries(book.id, [EntryDraft(f"E{i}", LORE) for i in range(3)])]
    before = {s.entry_id: (s.position, s.changed) for s in store.entry_stamps(book.id)}
    assert list(before) == ids
    store.update_entry(ids[0], canon=True)
    store.move_entries(book.id, [ids[2]], to="first")
    after = {s.entry_id: (s.position, s.changed) for s in store.entry_stamps(book.id)}
    assert list(after) == [ids[2], ids[0], ids[1]]
    assert [i for i in ids if before[i] != after[i]] == [ids[0], ids[2]]


# --- vectors ---------------------------------------------------------------------------------


def test_entries_stuck_indexing_are_put_back_after_the_timeout(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Stuck"))
    ids = [e.id for e in store.add_entries(book.id, [EntryDraft(f"E{i}", LORE) for i in range(3)])]
    store.set_index_status(ids[:2], IndexStatus.INDEXING)
    assert store.requeue_stuck(now() - timedelta(seconds=60)) == []  # still fresh
    assert sorted(store.requeue_stuck(now() + timedelta(seconds=1))) == sorted(ids[:2])
    assert {s for s, _ in store.index_statuses(ids).values()} == {IndexStatus.QUEUED}


def test_requeueing_never_undoes_a_vector_saved_since_the_sweep_read(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Race"))
    a, b = fill(store, book.id, 2)
    # The sweep read both as lacking a vector; then a worker saved a's (marking it indexed).
    assert {w.entry_id for w in store.entries_to_index("m1", book_id=book.id)} == {a, b}
    assert store.save_vectors(a, "m1", store.get_entry(a).content_hash, np.ones(4, np.float32))
    # b claims "indexed" with no vector of m1 (the model changed): only b goes back.
    store.set_index_status([b], IndexStatus.INDEXED)
    assert store.requeue_unindexed("m1", [a, b]) == 1
    statuses = store.index_statuses([a, b])
    assert (statuses[a][0], statuses[b][0]) == (IndexStatus.INDEXED, IndexStatus.QUEUED)
    assert store.requeue_unindexed("m1", [a, b]) == 0  # queued already: nothing to correct


def test_vectors_with_stale_hashes_are_never_returned(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Vectors"))
    a, b, c = fill(store, book.id, 3)
    hash_a = store.get_entry(a).content_hash
    two_chunks = np.arange(8, dtype=np.float32).reshape(2, 4)
    assert store.save_vectors(a, "m1", hash_a, two_chunks)
    assert store.save_vectors(b, "m1", store.get_entry(b).content_hash, np.ones(4, np.float32))
    assert store.get_entry(a).index_status == IndexStatus.INDEXED
    assert store.save_vectors(c, "m1", "an old hash", np.ones((1, 4), np.float32)) is False

    row_ids, matrix, _ = store.load_book_vectors(book.id, "m1")
    assert row_ids == [a, a, b] and matrix.dtype == np.float32 and matrix.shape == (3, 4)
    assert np.array_equal(matrix[:2], two_chunks)
    assert store.load_book_vectors(book.id, "m2")[0] == []
    assert store.book_index_share(book.id, "m1") == pytest.approx(2 / 3)
    assert [w.entry_id for w in store.entries_to_index("m1")] == [c]
    assert {w.entry_id for w in store.entries_to_index("m2", book_id=book.id)} == {a, b, c}
    assert [w.entry_id for w in store.entries_to_index("m2", entry_ids=[b])] == [b]

    store.update_entry(a, lore=LORE + " Changed.")  # the stored vector is now stale
    assert store.load_book_vectors(book.id, "m1")[0] == [b]
    assert store.save_vectors(a, "m1", hash_a, two_chunks) is False
    [work] = [w for w in store.entries_to_index("m1") if w.entry_id == a]
    assert work.content_hash == store.get_entry(a).content_hash and "Changed." in work.text
    assert work.text.startswith(store.get_entry(a).title)

    store.set_enabled(book.id, [b], False)
    assert store.load_book_vectors(book.id, "m1")[0] == []
    assert store.book_index_share(book.id, "m1") == 0.0
    store.set_index_status([c], IndexStatus.FAILED, error="model crashed")
    assert store.index_statuses([c]) == {c: (IndexStatus.FAILED, "model crashed")}

    before = store.get_book(book.id).index_version
    assert store.delete_vectors(model_id="m1", book_id=book.id) == 3  # incl. stale rows
    assert store.get_book(book.id).index_version > before
    assert store.get_entry(b).index_status == IndexStatus.QUEUED


def test_save_vectors_many_is_save_vectors_per_item_in_one_transaction(store: SqlStore) -> None:
    book_1 = store.create_book("alice", BookDraft(title="One"))
    book_2 = store.create_book("alice", BookDraft(title="Two"))
    book_3 = store.create_book("alice", BookDraft(title="Three"))
    a, b = fill(store, book_1.id, 2)
    (c,) = fill(store, book_2.id, 1)
    (d,) = fill(store, book_3.id, 1)
    hashes = {i: store.get_entry(i).content_hash for i in (a, b, c, d)}
    versions = {k.id: store.get_book(k.id).index_version for k in (book_1, book_2, book_3)}
    two_chunks = np.arange(8, dtype=np.float32).reshape(2, 4)
    assert store.save_vectors_many("m1", []) == []

    flags = store.save_vectors_many(
        "m1",
        [
            (a, hashes[a], two_chunks),
            (b, hashes[b], np.ones(4, np.float32)),  # one vector = one chunk
            (c, hashes[c], np.full((1, 4), 2, np.float32)),
            (d, "an old hash", np.ones((1, 4), np.float32)),  # moved on: skipped
            ("no-such-entry", "h", np.ones((1, 4), np.float32)),  # gone: skipped
        ],
    )
    assert flags == [True, True, True, False, False]
    row_ids, matrix, _ = store.load_book_vectors(book_1.id, "m1")
    assert row_ids == [a, a, b] and np.array_equal(matrix[:2], two_chunks)
    assert store.load_book_vectors(book_2.id, "m1")[0] == [c]
    assert store.load_book_vectors(book_3.id, "m1")[0] == []
    assert {i: s for i, (s, _) in store.index_statuses([a, b, c]).items()} == dict.fromkeys(
        (a, b, c), IndexStatus.INDEXED
    )
    # Each touched book's index_version moves exactly once; an untouched book's not at all.
    after = {k.id: store.get_book(k.id).index_version for k in (book_1, book_2, book_3)}
    assert after == {
        book_1.id: versions[book_1.id] + 1,
        book_2.id: versions[book_2.id] + 1,
        book_3.id: versions[book_3.id],
    }

    # Same as successive save_vectors calls: a repeated entry keeps its last current vectors,
    # an item with an outdated hash is refused even next to a current one.
    flags = store.save_vectors_many(
        "m1",
        [
            (a, hashes[a], np.ones((1, 4), np.float32)),
            (a, "an old hash", np.zeros((1, 4), np.float32)),
            (a, hashes[a], np.full((3, 4), 3, np.float32)),
        ],
    )
    assert flags == [True, False, True]
    row_ids, matrix, _ = store.load_book_vectors(book_1.id, "m1")
    assert row_ids == [a, a, a, b] and np.array_equal(matrix[:3], np.full((3, 4), 3))

    # A malformed item rejects the whole batch before anything is written.
    with pytest.raises(InvalidInput) as info:
        store.save_vectors_many(
            "m2",
            [
                (a, hashes[a], np.ones((1, 4), np.float32)),
                (b, hashes[b], np.ones((0, 4), np.float32)),
            ],
        )
    assert info.value.field == "vectors" and b in info.value.message
    assert store.load_book_vectors(book_1.id, "m2")[0] == []


def test_sqlite_files_use_wal_with_normal_sync(tmp_path: Path) -> None:
    opened = open_store(f"sqlite:///{tmp_path / 'worldbook.db'}")
    try:
        with opened._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1  # NORMAL
    finally:
        opened.close()


# --- token counts and import jobs ------------------------------------------------------------


def test_token_count_cache(store: SqlStore) -> None:
    store.put_token_counts("cl100k_base", {"h1": 10, "h2": 20})
    store.put_token_counts("cl100k_base", {"h1": 99})  # existing pair left as it is
    assert store.get_token_counts("cl100k_base", ["h1", "h2", "h3"]) == {"h1": 10, "h2": 20}
    assert store.get_token_counts("other", ["h1"]) == {}


def test_import_jobs_resume(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Imported"))
    job = store.create_import_job(book.id, "alice", "f" * 64, total_entries=700)
    assert store.find_import_job("alice", "f" * 64) == job
    all_drafts = drafts(700)
    store.add_entries(book.id, all_drafts[:500], import_job_id=job.id)
    assert store.get_import_job(job.id).done_entries == 500
    with pytest.raises(LimitExceeded):  # a failing batch does not advance the job
        store.add_entries(book.id, [EntryDraft(title="x", lore=LORE)], import_job_id=job.id)
    resumed = store.find_import_job("alice", "f" * 64)
    assert resumed is not None and resumed.done_entries == 500
    store.add_entries(book.id, all_drafts[resumed.done_entries :], import_job_id=job.id)
    done = store.finish_import_job(job.id)
    assert (done.status, done.done_entries) == ("done", 700)
    assert store.find_import_job("alice", "f" * 64) is None
    assert store.get_book(book.id).entry_count == 700


# --- error translation -----------------------------------------------------------------------


def test_unreachable_database_is_storage_unavailable(tmp_path: Path) -> None:
    missing_dir = tmp_path / "no" / "such" / "dir" / "worldbook.db"
    with pytest.raises(StorageUnavailable):
        upgrade_database(f"sqlite:///{missing_dir}")
    with pytest.raises(StorageUnavailable):
        SqlStore("postgresql+psycopg://postgres@127.0.0.1:1/none").get_book("x")
    with pytest.raises(InvalidInput):
        SqlStore("not a url")


def test_in_memory_sqlite_store_is_migrated() -> None:
    memory = open_store("sqlite://")
    book = memory.create_book("alice", BookDraft(title="Scratch"))
    assert memory.get_book(book.id).title == "Scratch"
    memory.close()


def test_new_ids_never_start_with_an_option_dash() -> None:
    from worldbook.core.store_rules import new_id

    assert all(new_id()[0].isalnum() for _ in range(2000))


# --- chats: classic chat state and the request log ---------------------------------------------


def test_chat_state_round_trip_scoped_by_owner(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Classic", mode=BookMode.CLASSIC))
    other = store.create_book("alice", BookDraft(title="Other", mode=BookMode.CLASSIC))
    state = {"e1": {"sticky": {"start": 3, "end": 5}}}
    store.record_chat_turn("alice", "chat-1", states={book.id: state, other.id: None}, log=None)
    assert store.chat_states("alice", "chat-1", [book.id, other.id]) == {book.id: state}
    # another user naming the same chat id has a chat of their own
    assert store.chat_states("bob", "chat-1", [book.id]) == {}
    assert store.chat_states("alice", "chat-2", [book.id]) == {}
    newer = {"e1": {"cooldown": {"start": 5, "end": 7}}}
    store.record_chat_turn("alice", "chat-1", states={book.id: newer}, log=None)
    assert store.chat_states("alice", "chat-1", [book.id]) == {book.id: newer}
    store.record_chat_turn("alice", "chat-1", states={book.id: {}}, log=None)
    assert store.chat_states("alice", "chat-1", [book.id]) == {}


def test_chat_state_goes_with_a_purged_book(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Classic", mode=BookMode.CLASSIC))
    state = {"e1": {"matched": True}}
    store.record_chat_turn("alice", "c", states={book.id: state}, log=None)
    store.purge_book(book.id)
    assert store.chat_states("alice", "c", [book.id]) == {}


def test_chat_log_keeps_the_newest_turns(store: SqlStore) -> None:
    for i in range(7):
        store.record_chat_turn("alice", "c", states={}, log={"turn": i}, keep_log=5)
    store.record_chat_turn("bob", "c", states={}, log={"turn": "bob"}, keep_log=5)
    rows = store.chat_log("alice", "c")
    assert [r.record["turn"] for r in rows] == [6, 5, 4, 3, 2]
    assert rows[0].id > rows[1].id and rows[0].chat_id == "c" and rows[0].owner_id == "alice"
    assert [r.record["turn"] for r in store.chat_log("alice", "c", limit=2)] == [6, 5]
    assert [r.record["turn"] for r in store.chat_log("bob", "c")] == ["bob"]
    assert store.chat_log("alice", "other") == []
    with pytest.raises(InvalidInput):
        store.chat_log("alice", "c", limit=0)


def test_priority_may_be_left_to_the_order(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Classic", mode=BookMode.CLASSIC))
    [plain, ranked] = store.add_entries(
        book.id,
        [EntryDraft(title="Plain", lore="x"), EntryDraft(title="Ranked", lore="y", priority=0)],
    )
    assert plain.priority is None and ranked.priority == 0
    assert store.update_entry(ranked.id, priority=None).priority is None


def test_hybrid_books_need_world_lore(store: SqlStore) -> None:
    book = store.create_book("alice", BookDraft(title="Classic", mode=BookMode.CLASSIC))
    store.add_entries(book.id, [EntryDraft(title="Key", lore="x", keys=["k"])])
    with pytest.raises(LimitExceeded):
        store.update_book(book.id, mode=BookMode.HYBRID)
    world = store.create_book("alice", BookDraft(title="World"))
    store.add_entries(world.id, drafts(2))
    assert store.update_book(world.id, mode="hybrid").mode == BookMode.HYBRID
    assert store.update_book(world.id, mode="classic").mode == BookMode.CLASSIC


def test_concurrent_turns_of_one_chat_are_last_writer_wins(store: SqlStore) -> None:
    """Two replicas answering turns of one chat at once: every write lands whole (no error, no
    mix of two turns within a book's row), the log keeps every turn."""
    books = [
        store.create_book("alice", BookDraft(title=f"B{i}", mode=BookMode.CLASSIC))
        for i in range(2)
    ]

    def write(i: int) -> None:
        states = {b.id: {"e": {"sticky": {"start": i, "end": i + 2}}} for b in books}
        store.record_chat_turn("alice", "busy", states=states, log={"turn": i})

    assert run_threads(8, write) == []
    final = store.chat_states("alice", "busy", [b.id for b in books])
    starts = {row["e"]["sticky"]["start"] for row in final.values()}
    assert len(final) == 2 and len(starts) == 1 and starts <= set(range(8))  # one whole turn
    assert sorted(r.record["turn"] for r in store.chat_log("alice", "busy")) == list(range(8))
