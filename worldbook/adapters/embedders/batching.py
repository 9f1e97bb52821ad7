"""Dynamic batching of query embeddings: concurrent turns share one forward pass (ADR 0004).

Measured before this wrapper, one process served fewer turns with 8 clients than with 1: each
turn embedded its new message in its own model call, and the calls queued for the cores one
message at a time. Text-embedding servers (Hugging Face text-embeddings-inference, Triton) batch
requests that arrive together; :class:`BatchingEmbedder` does that behind the ``Embedder`` port.

Leader/follower: a caller that finds the embedder idle runs its texts at once (no wait). Callers
arriving while a batch runs queue up; when it ends, the first of them leads the next batch: it
waits up to ``max_wait_ms`` for more arrivals (those finishing the batch are about to send their
next message) or until ``max_batch`` texts, then embeds every queued text in one inner call.
Each caller waits only for its own vectors. At most ``max_running`` inner calls run at once (one
by default, so a model using all cores is never oversubscribed by concurrent calls; with a
one-thread model, one per core).

Inner calls run on ``max_running`` threads of their own, never on the callers' (request) threads:
a model's native memory (allocator arenas, oneDNN scratch buffers) is kept per thread, and with
forward passes on whichever of the server's 40 request threads led a batch, the served process
grew by hundreds of MB under load (``worldbook bench load``, docs/decisions.md).

Vectors do not depend on the batch: the e5 engine masks padding out of the attention and the
mean pooling (``e5_torch._Packing``), so a message gets the vector it gets alone (within float
tolerance; tested with the real engine).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from worldbook.errors import IndexUnavailable, InvalidInput
from worldbook.ports import Embedder, Vectors
from worldbook.ports.wrapped_embedder import EmbedderWrapper
from worldbook.runtime.metrics import metrics


class BatchingStats(NamedTuple):
    batches: int
    """Inner calls made for queries."""
    texts: int
    """Distinct texts embedded in them."""
    largest: int
    """Most texts in one inner call."""


class _Request:
    __slots__ = ("done", "error", "queued_at", "taken", "texts", "vectors")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.queued_at = time.perf_counter()
        self.vectors: Vectors | None = None
        self.error: BaseException | None = None
        self.taken = False  # in a running batch
        self.done = False


class BatchingEmbedder(EmbedderWrapper):
    """An :class:`~worldbook.ports.Embedder` that batches concurrent ``embed_queries`` calls.

    Args:
        inner: the embedder doing the work; it must give a text the same vector whatever else is
            in its batch.
        max_wait_ms: how long the leader of a contended batch waits for more texts (0: never).
        max_batch: texts per inner call; a single call with more texts runs alone, whole.
        max_running: inner calls at once (1: batches run one after another; with a
            single-threaded model, the number of cores it may use).

    Passages (indexing) go straight to ``inner``: they come in large batches already.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        max_wait_ms: float = 2.0,
        max_batch: int = 32,
        max_running: int = 1,
    ) -> None:
        if max_wait_ms < 0:
            raise InvalidInput(
                f"max_wait_ms must be 0 or more; got {max_wait_ms}.", field="embed_batch_wait_ms"
            )
        if max_batch < 1:
            raise InvalidInput(
                f"max_batch must be at least 1; got {max_batch}.", field="embed_batch_max"
            )
        if max_running < 1:
            raise InvalidInput(
                f"max_running must be at least 1; got {max_running}.", field="embed_batch_running"
            )
        super().__init__(inner)
        self._max_wait = max_wait_ms / 1000
        self._max_batch = max_batch
        self._changed = threading.Condition(threading.Lock())
        self._queue: deque[_Request] = deque()
        self._max_running = max_running
        self._running = 0
        self._batches = self._texts = self._largest = 0
        # Created on first use, so an embedder that never embeds a query starts no thread.
        self._model_threads: ThreadPoolExecutor | None = None

    @property
    def inner(self) -> Embedder:
        return self._inner

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        request = _Request(list(texts))
        if not request.texts:
            return self._inner.embed_queries([])
        with self._changed:
            contended = self._running > 0 or bool(self._queue)
            self._queue.append(request)
            self._changed.notify_all()  # a gathering leader may want this one
            while not request.done:
                if request.taken or self._running >= self._max_running:
                    self._changed.wait()
                    contended = True
                    continue
                self._running += 1  # this caller leads the next batch
                self._lead(contended)
                contended = True
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def close(self) -> None:
        """Stop the model thread once the call in flight ends; a later query starts a new one."""
        with self._changed:
            threads, self._model_threads = self._model_threads, None
        if threads is not None:
            threads.shutdown(wait=True)

    def stats(self) -> BatchingStats:
        with self._changed:
            return BatchingStats(self._batches, self._texts, self._largest)

    def _lead(self, contended: bool) -> None:
        """Gather (only when others are about), run one inner call outside the lock, hand the
        lead back. Called and returns with the lock held."""
        if contended and self._max_wait > 0:
            deadline = time.monotonic() + self._max_wait
            while self._queued_texts() < self._max_batch:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
        if not self._queue:  # another leader took every queued request meanwhile
            self._running -= 1
            self._changed.notify_all()
            return
        batch = self._take()
        self._changed.release()
        try:
            self._run(batch)
        finally:
            self._changed.acquire()
            for request in batch:
                if request.vectors is None and request.error is None:
                    request.error = IndexUnavailable("the embedding batch was interrupted")
                request.done = True
            self._running -= 1
            self._changed.notify_all()

    def _queued_texts(self) -> int:
        return sum(len(r.texts) for r in self._queue)

    def _take(self) -> list[_Request]:
        """Queued requests, oldest first, up to ``max_batch`` texts (always at least one)."""
        batch = [self._queue.popleft()]
        count = len(batch[0].texts)
        while self._queue and count + len(self._queue[0].texts) <= self._max_batch:
            count += len(self._queue[0].texts)
            batch.append(self._queue.popleft())
        now = time.perf_counter()
        wait = metrics().embed_wait
        for request in batch:
            request.taken = True
            wait.observe(now - request.queued_at)
        return batch

    def _on_model_thread(self, texts: list[str]) -> Vectors:
        with self._changed:
            if self._model_threads is None:
                self._model_threads = ThreadPoolExecutor(
                    self._max_running, thread_name_prefix="worldbook-embed"
                )
            threads = self._model_threads
        return threads.submit(self._inner.embed_queries, texts).result()

    def _run(self, batch: list[_Request]) -> None:
        unique = list(dict.fromkeys(t for r in batch for t in r.texts))
        metrics().embed_batch.observe(len(unique))
        try:
            vectors = self._on_model_thread(unique)
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
                return
            # One caller's text may be what failed: retry each caller alone, so an error
            # reaches only the caller whose texts cause it.
            for request in batch:
                self._run([request])
            return
        row = {text: i for i, text in enumerate(unique)}
        for request in batch:
            request.vectors = np.take(vectors, [row[t] for t in request.texts], axis=0)
        with self._changed:
            self._batches += 1
            self._texts += len(unique)
            self._largest = max(self._largest, len(unique))
