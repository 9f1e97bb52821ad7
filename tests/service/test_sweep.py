"""Indexing never stalls with the defaults (ADR 0011): the embedded server sweeps at start
and periodically, and entries stuck ``indexing`` after a worker died are put back."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.records import now
from worldbook.core.types import IndexStatus
from worldbook.service.components import Components
from worldbook.service.indexing import index_entries, sweep
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder, InMemoryStore, RecordingQueue

LORE = "Lore long enough to pass the twenty character minimum of an entry."


def _book(store: InMemoryStore, n: int) -> list[str]:
    book = store.create_book("alice", BookDraft(title="Left behind"))
    return [e.id for e in store.add_entries(book.id, [EntryDraft(f"E{i}", LORE) for i in range(n)])]


def _wait_indexed(store: InMemoryStore, ids: list[str], timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        statuses = store.index_statuses(ids)
        if all(s == IndexStatus.INDEXED for s, _ in statuses.values()):
            return True
        time.sleep(0.05)
    return False


def test_entries_left_queued_at_shutdown_are_indexed_after_a_restart(tmp_path: Path) -> None:
    store = InMemoryStore()
    ids = _book(store, 12)  # written, never handed to a queue (the process died)
    settings = WorldbookSettings(data_dir=tmp_path, embedder="fake", sweep_interval_s=3600)
    parts = Components(settings, store=store, embedder=HashingEmbedder(), start_queue=True)
    try:
        assert _wait_indexed(store, ids)
        assert parts.sweeper is not None and parts.sweeper.runs >= 1
    finally:
        parts.close()


def test_a_cli_process_does_not_sweep(tmp_path: Path) -> None:
    settings = WorldbookSettings(data_dir=tmp_path, embedder="fake")
    parts = Components(
        settings, store=InMemoryStore(), embedder=HashingEmbedder(), start_queue=False
    )
    try:
        assert parts.sweeper is None
    finally:
        parts.close()


def test_the_sweep_puts_back_entries_stuck_indexing() -> None:
    store = InMemoryStore()
    ids = _book(store, 4)
    store.set_index_status(ids[:2], IndexStatus.INDEXING)
    queue = RecordingQueue()
    # Fresh "indexing" entries are left alone (their worker may be busy with them)...
    sweep(store, queue, "m", stuck_after_s=300)
    assert {store.index_statuses(ids[:2])[i][0] for i in ids[:2]} == {IndexStatus.INDEXING}
    # ...but past the timeout they go back to "queued" and are queued again.
    assert sorted(store.requeue_stuck(now() + timedelta(seconds=1))) == sorted(ids[:2])
    store.set_index_status(ids[:2], IndexStatus.INDEXING)
    queue.enqueued.clear()
    later = sweep(store, queue, "m", stuck_after_s=0)
    assert later == 4 and set(queue.enqueued) == set(ids)
    assert {store.index_statuses(ids)[i][0] for i in ids} == {IndexStatus.QUEUED}


class _WorkerFinishesMeanwhile:
    """The store, as a sweep sees it while a worker saves an entry's vector between the
    sweep's read of what lacks vectors and its correction of statuses."""

    def __init__(self, store: InMemoryStore, entry_id: str) -> None:
        self.store, self.entry_id = store, entry_id

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def entries_to_index(self, *args: object, **kwargs: object) -> object:
        rows = self.store.entries_to_index(*args, **kwargs)  # type: ignore[arg-type]
        index_entries([self.entry_id], store=self.store, embedder=HashingEmbedder())
        return rows


def test_the_sweep_never_undoes_what_a_worker_indexed_meanwhile() -> None:
    store = InMemoryStore()
    ids = _book(store, 3)
    queue = RecordingQueue()
    model = HashingEmbedder().model_id
    assert sweep(_WorkerFinishesMeanwhile(store, ids[0]), queue, model) == 3  # type: ignore[arg-type]
    # Its vector is current and it says so; before, the sweep put it back to "queued" and the
    # queued task, finding nothing to embed, left it there for good.
    assert store.index_statuses(ids[:1])[ids[0]][0] == IndexStatus.INDEXED
    assert [r.entry_id for r in store.entries_to_index(model)] == ids[1:]
