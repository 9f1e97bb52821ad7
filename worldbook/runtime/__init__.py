"""Threads and caches: what the pure core must not hold, shared by the adapters and the
service (nothing here imports an adapter or the service).

The threading model, in one place (every thread a worldbook process starts):

- **Request threads** (uvicorn's thread pool, or the caller's thread in the library and CLI)
  run turns. A turn never blocks on a background thread's work: it answers with what the
  caches have (the previous matcher plus an overlay, the previous vector-index build) while
  newer versions are built behind it (ADR 0008).
- **Background rebuilds** (:class:`~worldbook.runtime.background.LatestPerKey`, one daemon
  thread each: ``worldbook-matcher-build`` for keyword automata, the FAISS index's builder):
  keyed by book, newest submission wins, started ``AFTER_THE_TURN_S`` after the turn that
  asked; they pause while :class:`~worldbook.runtime.background.Foreground` counts turns in
  flight.
- **The model thread** (``worldbook-embed``, ``adapters/embedders/batching.py``): every query
  forward pass runs there, batched across request threads (ADR 0004).
- **Writers off the turn path** (``service/batch_worker.BatchWorker``): usage recording and
  prewarming, each one daemon thread draining a bounded queue.
- **The in-process indexer** (``adapters/queues.py``, embedded mode only): one thread embedding
  queued entries; with a broker, Celery workers do it in their own processes.

Caches (:class:`~worldbook.runtime.lru.LRU`, :mod:`~worldbook.runtime.matcher_cache`,
:mod:`~worldbook.runtime.classic_cache`) are bounded and keyed by versions and content
hashes, so they are never stale and need no invalidation across processes (ADR 0007); each is
guarded by its own lock, and expensive builds happen outside the lock.
"""
