"""The two :class:`worldbook.ports.IndexQueue` adapters: an in-process worker and Celery.

Celery is imported lazily, inside :class:`CeleryIndexQueue`, so ``worldbook serve`` on the
embedded defaults never imports it. The worker side (``workers/``) reads the task names and the
broker options from here, so the sending and the consuming side cannot drift apart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from worldbook.errors import QueueUnavailable, ServiceUnavailable
from worldbook.runtime.logs import current_request_id

log = logging.getLogger(__name__)

INDEX_TASK = "worldbook.index_entries"
SWEEP_TASK = "worldbook.sweep"
GLOSS_TASK = "worldbook.write_glosses"  # one book's glosses (ADR 0023)
INDEX_QUEUE = "worldbook-index"
REQUEST_ID_HEADER = "worldbook_request_id"


def broker_options(broker_url: str) -> dict[str, Any]:
    """Celery configuration shared by the sender (API, CLI) and the worker."""
    return {
        "broker_url": broker_url,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {
            # Unacknowledged messages of a worker that died are redelivered after this long;
            # the sweep covers shorter gaps; a task outliving it is only re-run (idempotent).
            "visibility_timeout": 600,
        },
        "task_default_queue": INDEX_QUEUE,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
    }


def sender_options(broker_url: str, *, connect_timeout_s: float = 2.0) -> dict[str, Any]:
    """The sender's configuration: fail within about ``connect_timeout_s`` when Redis is down.

    kombu's default is to retry a publish for ever, which would hang the API request whose
    write has already committed. Failing fast is safe: the entries stay ``queued`` and the
    periodic sweep sends them again. (The worker keeps Celery's reconnect-for-ever defaults:
    a daemon should wait for its broker.)
    """
    options = broker_options(broker_url)
    options.update(
        broker_connection_timeout=connect_timeout_s,
        broker_connection_retry=False,
        broker_connection_max_retries=1,
        task_publish_retry=False,
    )
    options["broker_transport_options"] = {
        **options["broker_transport_options"],
        "socket_connect_timeout": connect_timeout_s,
        "socket_timeout": max(5.0, connect_timeout_s),
        "max_retries": 1,
    }
    return options


class CeleryIndexQueue:
    """Sends entry ids to the Celery workers over the broker (Redis).

    Args:
        broker_url: the ``redis://`` URL of the broker.
        connect_timeout_s: how long a send or health check may wait for the broker.
        ids_per_message: entry ids per task message. One default batch: a large import then
            spreads evenly over workers (100 per message split 240 entries 100/100/40 over two
            workers, and one finished long after the other).
    """

    def __init__(
        self, broker_url: str, *, connect_timeout_s: float = 2.0, ids_per_message: int = 32
    ) -> None:
        from celery import Celery

        self._app = Celery("worldbook-sender", set_as_current=False)
        self._app.conf.update(sender_options(broker_url, connect_timeout_s=connect_timeout_s))
        self._timeout = connect_timeout_s
        self._broker_url = broker_url
        self._per_message = max(1, ids_per_message)

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        """Send these ids as tasks of at most ``ids_per_message`` ids each.

        Raises:
            QueueUnavailable: the broker did not accept a message (down or unreachable); the
                messages sent before it stand, which is harmless (tasks are idempotent).
        """
        ids = list(dict.fromkeys(entry_ids))
        for start in range(0, len(ids), self._per_message):
            self._send(INDEX_TASK, args=[ids[start : start + self._per_message]])

    def submit(self, book_ids: Iterable[str]) -> None:
        """Ask the workers to write these books' glosses (the ``GlossQueue`` port, ADR 0023).

        Raises:
            QueueUnavailable: the broker did not accept a message.
        """
        for book_id in dict.fromkeys(book_ids):
            self._send(GLOSS_TASK, args=[book_id])

    def _send(self, task: str, args: list[Any] | None = None) -> None:
        """Send one task message; a broker that cannot be reached is :class:`QueueUnavailable`."""
        # The request that queued the task names it, so the worker's log lines carry its id.
        request_id = current_request_id()
        headers = {REQUEST_ID_HEADER: request_id} if request_id else None
        try:
            self._app.send_task(task, args=args, retry=False, headers=headers)
        except Exception as exc:
            if _is_broker_error(exc):
                raise _unavailable(exc) from exc
            raise

    def healthy(self) -> bool:
        try:
            with self._app.connection_for_write() as conn:
                conn.ensure_connection(max_retries=1, interval_start=0, timeout=self._timeout)
        except Exception:
            return False
        return True

    def pending(self) -> None:
        """The ids wait in the broker, not in this process."""
        return None

    def claim(self, name: str, *, ttl_s: int) -> bool:
        """Take the named lock for ``ttl_s`` seconds if nobody holds it (Redis SET NX EX): one
        holder per interval across every worker. False when held, or the broker is down."""
        import redis

        try:
            client = redis.Redis.from_url(self._broker_url, socket_timeout=self._timeout)
            try:
                return bool(client.set(f"worldbook:lock:{name}", "1", nx=True, ex=ttl_s))
            finally:
                client.close()
        except redis.RedisError as exc:
            log.warning("could not take the %s lock: %s", name, exc)
            return False

    def close(self) -> None:
        self._app.close()


def _is_broker_error(exc: Exception) -> bool:
    """Whether ``exc`` is kombu/redis failing to reach the broker (not a programming error)."""
    from kombu.exceptions import KombuError
    from redis.exceptions import RedisError

    return isinstance(exc, KombuError | RedisError | OSError)


def _unavailable(exc: Exception) -> QueueUnavailable:
    return QueueUnavailable(
        f"The indexing broker is unreachable ({exc}). Entries stay queued and the periodic "
        "sweep re-sends them; check WORLDBOOK_BROKER_URL and that Redis is running."
    )


IndexFunction = Callable[[Sequence[str]], object]
"""What the in-process worker runs for a batch of ids (``index_entries`` with its wiring bound)."""


class InProcessIndexQueue:
    """A background thread that drains a de-duplicated set of entry ids through ``index_fn``.

    The set keeps first-request order and holds each id once, so an entry edited ten times
    while the worker was busy is embedded once. A transient failure (:class:`ServiceUnavailable`)
    puts the ids back and waits with exponential backoff; anything else is logged and dropped
    (``index_entries`` already recorded per-entry failures, and the sweep retries the rest).

    Call :meth:`start` once and :meth:`stop` on shutdown. Not started, it only collects ids.
    """

    def __init__(
        self,
        index_fn: IndexFunction,
        *,
        batch_size: int = 32,
        backoff_s: float = 1.0,
        backoff_max_s: float = 60.0,
    ) -> None:
        self._index_fn = index_fn
        self._batch_size = batch_size
        self._backoff_s = backoff_s
        self._backoff_max_s = backoff_max_s
        self._pending: dict[str, None] = {}
        self._busy = False
        self._stopping = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def enqueue(self, entry_ids: Sequence[str]) -> None:
        with self._cond:
            for entry_id in entry_ids:
                self._pending[entry_id] = None
            self._cond.notify_all()

    def healthy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def pending(self) -> int:
        with self._cond:
            return len(self._pending)

    def start(self) -> None:
        with self._cond:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="worldbook-indexer", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self.stop()

    def stop(self, timeout: float | None = 10.0) -> None:
        """Stop after the batch in flight; ids still pending are left for the sweep."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
        self._thread = None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is pending or running; False if ``timeout`` passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._pending or self._busy:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return True

    def _take(self) -> list[str] | None:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait()
            if self._stopping:
                return None
            batch = list(self._pending)[: self._batch_size]
            for entry_id in batch:
                del self._pending[entry_id]
            self._busy = True
            return batch

    def _finish(self) -> None:
        with self._cond:
            self._busy = False
            self._cond.notify_all()

    def _run(self) -> None:
        delay = self._backoff_s
        while (batch := self._take()) is not None:
            try:
                self._index_fn(batch)
                delay = self._backoff_s
            except ServiceUnavailable as exc:
                log.warning("indexing paused %.1fs, a service is down: %s", delay, exc.message)
                self._requeue(batch)
                self._finish()
                with self._cond:
                    self._cond.wait_for(lambda: self._stopping, timeout=delay)
                delay = min(delay * 2, self._backoff_max_s)
                continue
            except Exception:
                # The thread must outlive any bug in one batch; the sweep re-sends its entries.
                log.exception("in-process indexing of %d entries failed", len(batch))
            self._finish()

    def _requeue(self, batch: Sequence[str]) -> None:
        with self._cond:
            # Put them back at the front so order of requests is preserved.
            rest = self._pending
            self._pending = dict.fromkeys(batch)
            self._pending.update(rest)
