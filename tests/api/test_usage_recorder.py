"""Background usage recording: sums are exact, flush waits, bounded backlog, errors contained;
and the store write it uses matches ``record_turn_usage`` turn for turn (SQLite and PostgreSQL)."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from worldbook.adapters.store import SqlStore
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.errors import InvalidInput, StorageUnavailable
from worldbook.service.usage_recorder import Turn, UsageRecorder, aggregate

VIAS = ("canon", "whole_book", "full", "index")


class Sink:
    """Collects written sums; can block (``gate``) or fail."""

    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.books: dict[str, int] = {}
        self.entries: dict[str, dict[str, int]] = {}
        self.writes = 0
        self.gate = gate
        self.fail = fail
        self.entered = threading.Event()

    def __call__(self, books: Mapping[str, int], entries: Mapping[str, Mapping[str, int]]) -> None:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail:
            raise StorageUnavailable("database down")
        self.writes += 1
        for book, n in books.items():
            self.books[book] = self.books.get(book, 0) + n
        for entry, counts in entries.items():
            mine = self.entries.setdefault(entry, {})
            for via, n in counts.items():
                mine[via] = mine.get(via, 0) + n


def one_by_one(turns: list[Turn]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """The per-turn reference: what record_turn_usage would add, turn after turn."""
    books: dict[str, int] = {}
    entries: dict[str, dict[str, int]] = {}
    for book_ids, uses in turns:
        for book in set(book_ids):
            books[book] = books.get(book, 0) + 1
        seen: set[str] = set()
        for entry, via in uses:
            if entry in seen:
                continue
            seen.add(entry)
            entries.setdefault(entry, {})
            entries[entry][via] = entries[entry].get(via, 0) + 1
    return books, entries


turn_strategy = st.tuples(
    st.lists(st.sampled_from(["b1", "b2", "b3"]), max_size=3).map(tuple),
    st.lists(st.tuples(st.sampled_from(["e1", "e2", "e3", "e4"]), st.sampled_from(VIAS))).map(
        tuple
    ),
)


@given(st.lists(turn_strategy, max_size=30))
def test_aggregate_equals_turn_by_turn(turns: list[Turn]) -> None:
    books, entries = aggregate(turns)
    want_books, want_entries = one_by_one(turns)
    assert books == want_books
    assert {e: dict(c) for e, c in entries.items()} == want_entries


def test_queued_turns_are_summed_into_few_writes() -> None:
    gate = threading.Event()
    sink = Sink(gate)
    recorder = UsageRecorder(sink)
    for i in range(50):
        recorder.record(["b"], [(f"e{i % 5}", "full"), (f"e{i % 5}", "index")])
    gate.set()
    assert recorder.flush()
    assert sink.books == {"b": 50}
    assert sink.entries == {f"e{i}": {"full": 10} for i in range(5)}
    assert sink.writes < 50  # the writer took what queued while it was blocked in one go
    assert recorder.pending() == 0 and recorder.written == 50
    recorder.close()


def test_turns_within_the_write_interval_share_one_write_and_flush_cuts_it_short() -> None:
    sink = Sink()
    recorder = UsageRecorder(sink, write_interval=60.0)
    for i in range(20):
        recorder.record(["b"], [(f"e{i % 2}", "full")])
    assert not sink.entered.wait(0.3)  # the writer is gathering, nothing written yet
    started = time.monotonic()
    assert recorder.flush()
    assert time.monotonic() - started < 10  # flush does not wait out the 60 s interval
    assert sink.writes == 1 and sink.books == {"b": 20}
    recorder.close()


def test_a_negative_write_interval_is_refused() -> None:
    with pytest.raises(InvalidInput) as info:
        UsageRecorder(Sink(), write_interval=-1)
    assert info.value.field == "write_interval"


def test_full_backlog_drops_instead_of_blocking() -> None:
    gate = threading.Event()
    sink = Sink(gate)
    recorder = UsageRecorder(sink, max_pending=3)
    recorder.record(["b"], [("e0", "index")])
    # Wait until the writer holds turn 1 and is stuck: otherwise it may take several turns in
    # its first batch, and how many get dropped would depend on thread timing.
    assert sink.entered.wait(10)
    for i in range(1, 10):
        recorder.record(["b"], [(f"e{i}", "index")])  # never blocks, even with the writer stuck
    assert recorder.dropped == 6  # 3 wait in the backlog, the other 6 are dropped
    gate.set()
    recorder.close()
    assert sink.books.get("b", 0) + recorder.dropped == 10


def test_close_drops_what_it_could_not_write_in_time() -> None:
    gate = threading.Event()
    sink = Sink(gate)
    recorder = UsageRecorder(sink)
    recorder.record(["b"], [("e0", "full")])
    assert sink.entered.wait(10)  # the writer holds turn 1
    for i in range(1, 5):
        recorder.record(["b"], [(f"e{i}", "full")])
    recorder.close(timeout=0.2)
    assert recorder.dropped == 4
    gate.set()


def test_write_errors_are_counted_not_raised() -> None:
    recorder = UsageRecorder(Sink(fail=True))
    recorder.record(["b"], [("e", "canon")])
    assert recorder.flush()
    assert recorder.failed == 1
    recorder.close()
    recorder.record(["b"], [("e", "canon")])  # after close: ignored, no thread restarted
    assert recorder.pending() == 0


def test_store_sums_match_record_turn_usage(store: SqlStore) -> None:
    rng = random.Random(3)
    books = [store.create_book("u", BookDraft(title=f"B{i}")) for i in range(2)]
    drafts = [EntryDraft(title=f"E{j}", lore="Lore long enough for an entry.") for j in range(4)]
    ids = {b.id: [e.id for e in store.add_entries(b.id, drafts)] for b in books}
    turns: list[Turn] = []
    for _ in range(25):
        book = rng.choice(books).id
        uses = tuple((rng.choice(ids[book]), rng.choice(VIAS)) for _ in range(3))
        turns.append(((book,), uses))
    for book_ids, uses in turns:  # the reference, on the first half of the counters
        store.record_turn_usage(book_ids, uses)
    before = {b.id: store.entry_usage(b.id) for b in books}
    store.add_usage_counts(*aggregate(turns))  # the same turns again, summed
    for record in books:
        assert store.book_turns(record.id) == 2 * sum(1 for t in turns if t[0] == (record.id,))
        after = store.entry_usage(record.id)
        for entry_id, old in before[record.id].items():
            new = after[entry_id]
            for via in (*VIAS, "total"):
                assert getattr(new, via) == 2 * getattr(old, via)
