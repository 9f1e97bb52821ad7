"""Background indexing as plain functions: embed entries, store their vectors, keep statuses.

Both queues (Celery tasks in ``workers/`` and the in-process worker in
:mod:`worldbook.adapters.queues`) call :func:`index_entries`; nothing here knows which one runs it.

Idempotency is the store's: :meth:`entries_to_index` only returns enabled entries that have no
vector of this model for their *current* content hash, and :meth:`save_vectors_many` refuses
vectors of a hash that moved on. So running the same request twice (a redelivered Celery message,
a sweep racing a task) embeds nothing the second time and never stores a vector twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np

from worldbook.core.embed_text import MIN_PASSAGE_UNITS, chunk_entry_text
from worldbook.core.records import now
from worldbook.core.types import IndexStatus
from worldbook.errors import InvalidInput, QueueUnavailable, ServiceUnavailable
from worldbook.ports import Embedder, IndexQueue, Vectors, VectorStore
from worldbook.service.needs import Indexing

log = logging.getLogger(__name__)


@dataclass(slots=True)
class IndexReport:
    """What one :func:`index_entries` call did.

    ``stale`` entries changed while they were being embedded; their new text is (or will be)
    queued by whoever changed it, and the periodic sweep catches it otherwise.
    """

    indexed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    texts_embedded: int = 0
    model_calls: int = 0
    aligned: IndexReport | None = None  # the aligned view's pass (ADR 0016), if any
    books: set[str] = field(default_factory=set)  # books with entries indexed (for glosses)

    def merge(self, other: IndexReport) -> None:
        self.indexed.extend(other.indexed)
        self.stale.extend(other.stale)
        self.failed.update(other.failed)
        self.texts_embedded += other.texts_embedded
        self.model_calls += other.model_calls
        self.books |= other.books


@dataclass(frozen=True, slots=True)
class _Work:
    entry_id: str
    book_id: str
    content_hash: str
    chunks: tuple[str, ...]


def index_entries(
    entry_ids: Sequence[str] | None,
    *,
    store: VectorStore,
    embedder: Embedder,
    batch_size: int = 32,
    book_id: str | None = None,
    on_indexed: Callable[[set[str]], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    statuses: bool = True,
) -> IndexReport:
    """Embed and store vectors for the given entries (``None`` = everything not yet indexed).

    Entries already indexed for their current text and this model are skipped, so the call is
    idempotent. At most ``batch_size`` texts go to the model per call. ``on_indexed`` receives
    the ids of the books whose entries just got vectors (to invalidate cached vector indexes);
    ``on_progress`` the number of entries finished after each batch. With ``statuses``
    False (the aligned view's pass) entries' index statuses are left as they are, but for
    ``indexed`` which saving vectors sets.

    Raises:
        ServiceUnavailable: the store or the model is down; statuses go back to ``queued`` so
            a retry (or the sweep) picks the entries up again.
    """
    if batch_size < 1:
        raise InvalidInput(f"batch_size must be at least 1; got {batch_size}.", field="batch_size")
    ids = None if entry_ids is None else list(dict.fromkeys(entry_ids))
    if ids is not None and not ids:
        return IndexReport()
    work = _work(store, embedder, book_id, ids)
    report = IndexReport()
    for batch in _batches(work, batch_size):
        batch_ids = [w.entry_id for w in batch]
        if statuses:
            store.set_index_status(batch_ids, IndexStatus.INDEXING)
        part = IndexReport()
        try:
            _index_batch(
                batch,
                store=store,
                embedder=embedder,
                batch_size=batch_size,
                out=part,
                statuses=statuses,
            )
        except ServiceUnavailable:
            saved = set(part.indexed)
            if statuses:
                _requeue_quietly(store, [i for i in batch_ids if i not in saved])
            raise
        done = set(part.indexed)
        part.books = {w.book_id for w in batch if w.entry_id in done}
        report.merge(part)
        if on_indexed is not None and part.books:
            on_indexed(part.books)
        if on_progress is not None:
            on_progress(len(batch))
    return report


def _work(
    store: VectorStore, embedder: Embedder, book_id: str | None, ids: list[str] | None
) -> list[_Work]:
    """The entries without a current vector of ``embedder``'s model, their text chunked."""
    max_units = max(MIN_PASSAGE_UNITS, embedder.max_passage_chars)
    rows = store.entries_to_index(embedder.model_id, book_id=book_id, entry_ids=ids)
    return [
        _Work(r.entry_id, r.book_id, r.content_hash, tuple(chunk_entry_text(r.text, max_units)))
        for r in rows
    ]


def _batches(work: Sequence[_Work], batch_size: int) -> Iterable[list[_Work]]:
    """Group entries so each group has at most ``batch_size`` chunks (one oversized entry alone)."""
    batch: list[_Work] = []
    size = 0
    for item in work:
        if batch and size + len(item.chunks) > batch_size:
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += len(item.chunks)
    if batch:
        yield batch


def _index_batch(
    batch: Sequence[_Work],
    *,
    store: VectorStore,
    embedder: Embedder,
    batch_size: int,
    out: IndexReport,
    statuses: bool = True,
) -> None:
    """Embed one batch and save its vectors in one transaction, recording into ``out``.

    A batch is saved whole or not at all, so after an outage every entry of the batch that was
    not saved goes back to ``queued`` (see :func:`index_entries`)."""
    try:
        vectors = _embed_all(batch, embedder, batch_size, out)
    except ServiceUnavailable:
        raise
    except Exception as exc:
        # One bad text must not fail its neighbours: retry one entry at a time and record the
        # reason on the entries that still fail. A worker has to survive any model error.
        if len(batch) == 1:
            reason = _reason(exc)
            log.warning("indexing entry %s failed: %s", batch[0].entry_id, reason)
            if statuses:
                store.set_index_status([batch[0].entry_id], IndexStatus.FAILED, error=reason)
            out.failed[batch[0].entry_id] = reason
            return
        for item in batch:
            _index_batch(
                [item],
                store=store,
                embedder=embedder,
                batch_size=batch_size,
                out=out,
                statuses=statuses,
            )
        return
    # One transaction for the whole batch; it also marks the saved entries indexed.
    saved = store.save_vectors_many(
        embedder.model_id,
        [(item.entry_id, item.content_hash, v) for item, v in zip(batch, vectors, strict=True)],
    )
    stale: list[str] = []
    for item, ok in zip(batch, saved, strict=True):
        (out.indexed if ok else stale).append(item.entry_id)
    if stale:
        if statuses:
            store.set_index_status(stale, IndexStatus.QUEUED)
        out.stale.extend(stale)


def _requeue_quietly(store: VectorStore, entry_ids: Sequence[str]) -> None:
    """Put entries back to ``queued`` after an outage, if the store still answers."""
    if not entry_ids:
        return
    try:
        store.set_index_status(entry_ids, IndexStatus.QUEUED)
    except ServiceUnavailable:
        # The database itself is down: the entries stay "indexing", still have no vector,
        # and the sweep re-sends them; the outage being raised matters more than the status.
        log.warning("could not reset the status of %d entries to queued", len(entry_ids))


def _embed_all(
    batch: Sequence[_Work], embedder: Embedder, batch_size: int, report: IndexReport
) -> list[Vectors]:
    """Embed every chunk of the batch, ``batch_size`` texts per model call, split per entry."""
    texts = [chunk for item in batch for chunk in item.chunks]
    parts: list[Vectors] = []
    for start in range(0, len(texts), batch_size):
        parts.append(embedder.embed_passages(texts[start : start + batch_size]))
        report.model_calls += 1
    flat = np.concatenate(parts, axis=0) if parts else np.zeros((0, embedder.dim), np.float32)
    report.texts_embedded += len(texts)
    out: list[Vectors] = []
    offset = 0
    for item in batch:
        out.append(np.ascontiguousarray(flat[offset : offset + len(item.chunks)], np.float32))
        offset += len(item.chunks)
    return out


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or "no message"
    return f"{type(exc).__name__}: {text}"[:500]


def request_indexing(
    store: VectorStore, queue: IndexQueue, entry_ids: Sequence[str], model_id: str
) -> bool:
    """Mark the entries that need a vector as queued and hand them to the queue.

    Called by the use cases that create or edit entries. A broker outage must not fail the
    write that triggered it: the entries stay ``queued`` in the database, the periodic sweep
    re-sends them, and this returns False (the caller may report it).
    """
    ids = [row.entry_id for row in store.entries_to_index(model_id, entry_ids=list(entry_ids))]
    if not ids:
        return True
    store.set_index_status(ids, IndexStatus.QUEUED)
    try:
        queue.enqueue(ids)
    except QueueUnavailable as exc:
        log.warning("indexing queue unavailable, the sweep will retry: %s", exc.message)
        return False
    return True


def sweep(
    store: VectorStore,
    queue: IndexQueue,
    model_id: str,
    *,
    book_id: str | None = None,
    stuck_after_s: float | None = None,
) -> int:
    """Re-queue every enabled entry without a current vector of ``model_id``.

    This is what makes a lost message, a crashed worker or a broker outage lose nothing; it
    runs at start and periodically in every deployment (the API's sweeper thread, and the
    ``worldbook worker``'s) and as ``worldbook index --sweep``. With ``stuck_after_s``,
    entries ``indexing`` for longer than that (their worker died) go back to ``queued`` first.
    Returns how many entries were queued.

    Raises:
        QueueUnavailable: the broker is still down (nothing was lost; run it again later).
    """
    if stuck_after_s is not None:
        store.requeue_stuck(now() - timedelta(seconds=stuck_after_s))
    ids = [row.entry_id for row in store.entries_to_index(model_id, book_id=book_id)]
    if not ids:
        return 0
    # Only an entry that claims "indexed" without a current vector (the model changed, or the
    # entry was re-enabled) is corrected to "queued", in one conditional write: a worker may
    # have saved its vector since the read above. A failed entry keeps its reason until a
    # retry succeeds, and queued/indexing ones are already right.
    store.requeue_unindexed(model_id, ids)
    queue.enqueue(ids)
    return len(ids)


def rebuild(
    store: VectorStore,
    model_id: str,
    *,
    book_id: str | None = None,
    queue: IndexQueue | None = None,
    all_models: bool = False,
) -> int:
    """Drop stored vectors (of ``model_id``, or of every model) and queue everything again.

    Used after a model change or a suspected bad index. Without a queue the caller indexes
    directly (``index_entries(None, ...)``). Returns how many entries now need indexing.
    """
    # delete_vectors also puts the entries back to "queued", in the same transaction.
    store.delete_vectors(model_id=None if all_models else model_id, book_id=book_id)
    if queue is not None:
        return sweep(store, queue, model_id, book_id=book_id)
    return len(store.entries_to_index(model_id, book_id=book_id))


def index_now(
    services: Indexing,
    entry_ids: Sequence[str] | None = None,
    *,
    book_id: str | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> IndexReport:
    """Embed in this process, now, with the process's ports (the in-process queue's work and
    ``worldbook index --wait`` without a broker)."""
    report = index_entries(
        entry_ids,
        store=services.vectors,
        embedder=services.embedder,
        batch_size=services.settings.index_batch_size,
        book_id=book_id,
        on_indexed=services.invalidate_books,
        on_progress=on_progress,
    )
    if services.aligned is not None:
        report.aligned = index_aligned(
            entry_ids,
            store=services.vectors,
            embedder=services.aligned.embedder,
            batch_size=services.settings.index_batch_size,
            book_id=book_id,
            on_indexed=services.invalidate_books,
        )
    return report


def index_aligned(
    entry_ids: Sequence[str] | None,
    *,
    store: VectorStore,
    embedder: Embedder,
    batch_size: int = 32,
    book_id: str | None = None,
    on_indexed: Callable[[set[str]], None] | None = None,
) -> IndexReport:
    """The second pass for the aligned view (ADR 0016): the same entries embedded by the
    aligned model, after the primary's. Entries' statuses follow the primary model: a failure
    here is logged and leaves the entry as the primary pass left it (the sweep retries)."""
    try:
        return index_entries(
            entry_ids,
            store=store,
            embedder=embedder,
            batch_size=batch_size,
            book_id=book_id,
            on_indexed=on_indexed,
            statuses=False,
        )
    except ServiceUnavailable as exc:
        log.warning("aligned view not indexed now, the sweep will retry: %s", exc)
        return IndexReport()
