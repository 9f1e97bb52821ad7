"""index_entries, sweep, rebuild and request_indexing on a real SQLite store, fake embedder."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from workers.runtime import Indexer
from worldbook.adapters.embedders._common import as_vectors
from worldbook.adapters.queues import InProcessIndexQueue
from worldbook.adapters.store import SqlStore, open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.embed_text import chunk_entry_text
from worldbook.core.types import IndexStatus
from worldbook.errors import IndexUnavailable, InvalidInput, QueueUnavailable, StorageUnavailable
from worldbook.ports import Vectors
from worldbook.service.indexing import index_entries, rebuild, request_indexing, sweep
from worldbook.testing import HashingEmbedder, RecordingQueue

MODEL = HashingEmbedder().model_id


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqlStore]:
    path = tmp_path_factory.mktemp("indexing") / "worldbook.db"
    s = open_store(f"sqlite:///{path}")
    yield s
    s.close()


def make_book(store: SqlStore, n: int, *, disabled: Sequence[int] = ()) -> tuple[str, list[str]]:
    book = store.create_book("tester", BookDraft(title="Test world"))
    drafts = [
        EntryDraft(
            title=f"Place {i}",
            lore=f"The town of Vell{i} sits by the river and trades in salt and wool.",
            aliases=[f"Vell{i}"],
            enabled=i not in disabled,
        )
        for i in range(n)
    ]
    return book.id, [e.id for e in store.add_entries(book.id, drafts)]


def vector_rows(store: SqlStore, book_id: str) -> dict[str, int]:
    ids = store.load_book_vectors(book_id, MODEL).entry_ids
    counts: dict[str, int] = {}
    for entry_id in ids:
        counts[entry_id] = counts.get(entry_id, 0) + 1
    return counts


def statuses(store: SqlStore, ids: Sequence[str]) -> dict[str, IndexStatus]:
    return {k: v[0] for k, v in store.index_statuses(ids).items()}


class BrokerQueue(RecordingQueue):
    """The recording fake with each send kept apart in ``sent``, and a broker that may be down
    (closed): a send then fails as the Celery sender's does."""

    def __init__(self, *, down: bool = False) -> None:
        self.sent: list[list[str]] = []
        super().__init__(lambda ids: self.sent.append(list(ids)))
        self.closed = down

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        if self.closed:
            raise QueueUnavailable("broker down")
        super().enqueue(entry_ids)


def test_indexes_every_enabled_entry_once_and_only_once(store: SqlStore) -> None:
    book_id, ids = make_book(store, 7, disabled=[3])
    embedder = HashingEmbedder()
    report = index_entries(ids, store=store, embedder=embedder, batch_size=32)
    enabled = [i for n, i in enumerate(ids) if n != 3]
    assert sorted(report.indexed) == sorted(enabled)
    assert vector_rows(store, book_id) == dict.fromkeys(enabled, 1)
    assert store.book_index_share(book_id, MODEL) == 1.0
    assert statuses(store, enabled) == dict.fromkeys(enabled, IndexStatus.INDEXED)
    # Idempotent: a redelivered request embeds nothing and stores nothing twice.
    again = index_entries(ids, store=store, embedder=embedder, batch_size=32)
    assert again.indexed == [] and again.texts_embedded == 0
    assert embedder.calls == [6]
    assert vector_rows(store, book_id) == dict.fromkeys(enabled, 1)


def test_model_calls_hold_at_most_batch_size_texts(store: SqlStore) -> None:
    book_id, ids = make_book(store, 10)
    long_lore = " ".join(f"Sentence {j} of the long chronicle." for j in range(400))
    store.update_entry(ids[4], lore=long_lore)
    embedder = HashingEmbedder()
    (work,) = store.entries_to_index(MODEL, entry_ids=[ids[4]])
    chunks = len(chunk_entry_text(work.text, embedder.max_passage_chars))
    assert chunks > 1
    report = index_entries(None, store=store, embedder=embedder, batch_size=4, book_id=book_id)
    assert len(report.indexed) == 10
    assert all(0 < size <= 4 for size in embedder.calls)
    assert vector_rows(store, book_id)[ids[4]] == chunks
    assert sum(embedder.calls) == report.texts_embedded == 9 + chunks


def test_an_edited_entry_is_re_embedded_and_its_old_vectors_replaced(store: SqlStore) -> None:
    book_id, ids = make_book(store, 3)
    embedder = HashingEmbedder()
    index_entries(ids, store=store, embedder=embedder)
    store.update_entry(ids[1], lore="A completely different story about the salt mines below.")
    assert store.book_index_share(book_id, MODEL) == pytest.approx(2 / 3)
    report = index_entries(ids, store=store, embedder=embedder)
    assert report.indexed == [ids[1]]
    assert vector_rows(store, book_id) == dict.fromkeys(ids, 1)


class EditingEmbedder(HashingEmbedder):
    """Edits an entry while its batch is being embedded (a user typing during indexing)."""

    def __init__(self, store: SqlStore, entry_id: str) -> None:
        super().__init__()
        self.store, self.entry_id, self.done = store, entry_id, False

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        if not self.done:
            self.done = True
            self.store.update_entry(self.entry_id, lore="Rewritten while it was being embedded.")
        return super().embed_passages(texts)


def test_a_text_that_changed_during_embedding_is_not_stored(store: SqlStore) -> None:
    book_id, ids = make_book(store, 3)
    report = index_entries(ids, store=store, embedder=EditingEmbedder(store, ids[0]))
    assert report.stale == [ids[0]]
    assert sorted(report.indexed) == sorted(ids[1:])
    assert statuses(store, [ids[0]])[ids[0]] == IndexStatus.QUEUED
    assert ids[0] not in vector_rows(store, book_id)
    assert index_entries(ids, store=store, embedder=HashingEmbedder()).indexed == [ids[0]]


class PoisonEmbedder(HashingEmbedder):
    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        if any("POISON" in t for t in texts):
            raise ValueError("the model choked on this text")
        return super().embed_passages(texts)


def test_one_failing_text_does_not_fail_its_batch(store: SqlStore) -> None:
    book_id, ids = make_book(store, 5)
    store.update_entry(ids[2], lore="This lore contains POISON for the model, sadly.")
    report = index_entries(ids, store=store, embedder=PoisonEmbedder(), batch_size=8)
    assert sorted(report.indexed) == sorted(i for i in ids if i != ids[2])
    assert report.failed == {ids[2]: "ValueError: the model choked on this text"}
    status, error = store.index_statuses([ids[2]])[ids[2]]
    assert status == IndexStatus.FAILED and error is not None and "choked" in error
    assert store.book_index_share(book_id, MODEL) == pytest.approx(4 / 5)


class DownEmbedder(HashingEmbedder):
    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raise IndexUnavailable("model files missing")


def test_an_outage_re_raises_and_leaves_entries_queued(store: SqlStore) -> None:
    _, ids = make_book(store, 3)
    with pytest.raises(IndexUnavailable):
        index_entries(ids, store=store, embedder=DownEmbedder())
    assert set(statuses(store, ids).values()) == {IndexStatus.QUEUED}


class FlakyStore:
    """The real store, whose database goes away after ``saves`` batches were saved."""

    def __init__(self, store: SqlStore, saves: int) -> None:
        self._store, self._left = store, saves
        self.batches: list[list[str]] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    def save_vectors_many(
        self, model_id: str, items: Sequence[tuple[str, str, Vectors]]
    ) -> list[bool]:
        self.batches.append([entry_id for entry_id, _, _ in items])
        if self._left == 0:
            raise StorageUnavailable("database went away")
        self._left -= 1
        return self._store.save_vectors_many(model_id, items)


def test_a_store_outage_mid_run_keeps_saved_batches_indexed(store: SqlStore) -> None:
    _, ids = make_book(store, 4)
    flaky = FlakyStore(store, saves=1)
    with pytest.raises(StorageUnavailable):
        index_entries(ids, store=flaky, embedder=HashingEmbedder(), batch_size=1)  # type: ignore[arg-type]
    assert statuses(store, ids) == {
        ids[0]: IndexStatus.INDEXED,
        **dict.fromkeys(ids[1:], IndexStatus.QUEUED),
    }


def test_each_batch_is_saved_in_one_call_and_an_outage_saves_none_of_it(store: SqlStore) -> None:
    _, ids = make_book(store, 10)
    counting = FlakyStore(store, saves=-1)  # never fails
    report = index_entries(ids, store=counting, embedder=HashingEmbedder(), batch_size=4)  # type: ignore[arg-type]
    assert counting.batches == [ids[0:4], ids[4:8], ids[8:10]]
    assert sorted(report.indexed) == sorted(ids)

    _, more = make_book(store, 3)
    down = FlakyStore(store, saves=0)
    with pytest.raises(StorageUnavailable):
        index_entries(more, store=down, embedder=HashingEmbedder(), batch_size=8)  # type: ignore[arg-type]
    assert down.batches == [more]
    assert statuses(store, more) == dict.fromkeys(more, IndexStatus.QUEUED)
    assert store.entries_to_index(MODEL, entry_ids=more) != []


class NanEmbedder(HashingEmbedder):
    """Returns NaN for texts containing "NAN", checked by the real embedders' validation."""

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        raw = super().embed_passages(texts)
        raw[[i for i, t in enumerate(texts) if "NAN" in t]] = np.nan
        return as_vectors(raw, len(texts), self.dim, self.model_id, passages=True)


def test_a_non_finite_vector_fails_its_entry_and_is_not_an_outage(store: SqlStore) -> None:
    book_id, ids = make_book(store, 5)
    store.update_entry(ids[1], lore="The model turns this lore into NAN, every time.")
    report = index_entries(ids, store=store, embedder=NanEmbedder(), batch_size=8)
    assert sorted(report.indexed) == sorted(i for i in ids if i != ids[1])
    assert list(report.failed) == [ids[1]]
    status, error = store.index_statuses([ids[1]])[ids[1]]
    assert status == IndexStatus.FAILED
    assert error is not None and error.startswith("InvalidInput:") and "non-finite" in error
    assert ids[1] not in vector_rows(store, book_id)


def test_non_finite_vectors_blame_the_text_for_passages_and_the_model_for_queries() -> None:
    raw = np.ones((3, 4), np.float32)
    raw[2, 1] = np.inf
    with pytest.raises(InvalidInput) as bad_text:
        as_vectors(raw, 3, 4, "m", passages=True)
    assert bad_text.value.field == "texts[2]" and "[2]" in bad_text.value.message
    # A query the model cannot embed must not reject the user's turn: the turn falls back to
    # names and list order, which happens for IndexUnavailable (service.turns).
    with pytest.raises(IndexUnavailable):
        as_vectors(raw, 3, 4, "m", passages=False)
    with pytest.raises(IndexUnavailable):  # a wrong shape is the model's fault either way
        as_vectors(raw, 2, 4, "m", passages=True)
    assert as_vectors(raw[:2], 2, 4, "m", passages=True).dtype == np.float32


def test_on_indexed_names_the_books_that_changed(store: SqlStore) -> None:
    book_a, ids_a = make_book(store, 2)
    book_b, ids_b = make_book(store, 2)
    seen: list[set[str]] = []
    index_entries(ids_a + ids_b, store=store, embedder=HashingEmbedder(), on_indexed=seen.append)
    assert set().union(*seen) == {book_a, book_b}


def test_sweep_queues_exactly_what_lacks_a_current_vector(store: SqlStore) -> None:
    book_id, ids = make_book(store, 4)
    index_entries(ids[:2], store=store, embedder=HashingEmbedder())
    queue = BrokerQueue()
    assert sweep(store, queue, MODEL, book_id=book_id) == 2
    assert queue.sent == [ids[2:]]
    assert set(statuses(store, ids[2:]).values()) == {IndexStatus.QUEUED}


def test_sweep_keeps_failure_reasons_and_corrects_a_false_indexed(store: SqlStore) -> None:
    book_id, ids = make_book(store, 3)
    store.update_entry(ids[0], lore="This lore contains POISON for the model, sadly.")
    index_entries(ids[:1], store=store, embedder=PoisonEmbedder())
    store.set_index_status(ids[1:2], IndexStatus.INDEXED)  # claims indexed, has no vector
    queue = BrokerQueue()
    assert sweep(store, queue, MODEL, book_id=book_id) == 3
    assert queue.sent == [ids]
    after = store.index_statuses(ids)
    assert after[ids[0]][0] == IndexStatus.FAILED and "choked" in (after[ids[0]][1] or "")
    assert after[ids[1]][0] == IndexStatus.QUEUED
    assert after[ids[2]][0] == IndexStatus.QUEUED


def test_a_broker_outage_does_not_fail_the_write_and_the_sweep_recovers(store: SqlStore) -> None:
    book_id, ids = make_book(store, 3)
    assert request_indexing(store, BrokerQueue(down=True), ids, MODEL) is False
    assert set(statuses(store, ids).values()) == {IndexStatus.QUEUED}
    with pytest.raises(QueueUnavailable):
        sweep(store, BrokerQueue(down=True), MODEL, book_id=book_id)
    up = BrokerQueue()
    assert sweep(store, up, MODEL, book_id=book_id) == 3
    assert up.sent == [ids]


def test_request_indexing_skips_entries_already_indexed(store: SqlStore) -> None:
    _, ids = make_book(store, 3)
    index_entries(ids[:1], store=store, embedder=HashingEmbedder())
    queue = BrokerQueue()
    assert request_indexing(store, queue, ids, MODEL)
    assert queue.sent == [ids[1:]]
    assert statuses(store, ids[:1])[ids[0]] == IndexStatus.INDEXED


def test_rebuild_drops_the_vectors_and_queues_everything_again(store: SqlStore) -> None:
    book_id, ids = make_book(store, 3)
    index_entries(ids, store=store, embedder=HashingEmbedder())
    queue = BrokerQueue()
    assert rebuild(store, MODEL, book_id=book_id, queue=queue) == 3
    assert queue.sent == [ids]
    assert store.book_index_share(book_id, MODEL) == 0.0


def test_the_in_process_worker_runs_the_same_function(store: SqlStore) -> None:
    book_id, ids = make_book(store, 12)
    indexer = Indexer(store=store, embedder=HashingEmbedder(), batch_size=5)
    queue = InProcessIndexQueue(indexer.run, batch_size=5)
    queue.start()
    try:
        assert request_indexing(store, queue, ids, MODEL)
        assert queue.wait_idle(timeout=30)
    finally:
        queue.stop()
    assert store.book_index_share(book_id, MODEL) == 1.0
    assert vector_rows(store, book_id) == dict.fromkeys(ids, 1)
