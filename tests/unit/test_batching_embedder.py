"""BatchingEmbedder: concurrent query calls share inner calls; each caller gets its own vectors.

Synchronised with events and the embedder's queue, never with sleeps or timing asserts.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from worldbook.adapters.embedders.batching import BatchingEmbedder
from worldbook.errors import IndexUnavailable, InvalidInput
from worldbook.ports import Embedder, Vectors

DIM = 8
JOIN = 30.0  # seconds; only reached if the code under test deadlocks


def vector_of(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


class GatedEmbedder:
    """Records each inner call; the first call can be held until ``release`` is set."""

    loaded = True

    def __init__(self, *, hold_first: bool = False, bad: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.threads: set[int] = set()  # the threads inner calls ran on
        self.changed = threading.Condition()
        self.passage_calls: list[list[str]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        if not hold_first:
            self.release.set()
        self.bad = bad

    model_id = "gated@1"
    dim = DIM
    max_passage_chars = 100

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        with self.changed:
            self.calls.append(list(texts))
            self.threads.add(threading.get_ident())
            self.changed.notify_all()
        self.entered.set()
        assert self.release.wait(JOIN)
        if self.bad is not None and self.bad in texts:
            raise IndexUnavailable(f"cannot embed {self.bad!r}")
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([vector_of(t) for t in texts])

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.passage_calls.append(list(texts))
        return np.stack([vector_of(t) for t in texts])


class Caller(threading.Thread):
    def __init__(self, embed: Callable[[list[str]], Vectors], texts: list[str]) -> None:
        super().__init__(daemon=True)
        self.embed, self.texts = embed, texts
        self.result: Vectors | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.embed(self.texts)
        except BaseException as exc:
            self.error = exc

    def finish(self) -> Caller:
        self.join(JOIN)
        assert not self.is_alive(), "caller still waiting"
        return self


def queued(embedder: BatchingEmbedder, count: int) -> None:
    """Block until ``count`` requests wait in the queue (the leader's batch is running)."""
    with embedder._changed:
        assert embedder._changed.wait_for(lambda: len(embedder._queue) == count, JOIN)


def start_held_batch(embedder: BatchingEmbedder, inner: GatedEmbedder) -> Caller:
    leader = Caller(embedder.embed_queries, ["leader"])
    leader.start()
    assert inner.entered.wait(JOIN)
    return leader


def test_is_an_embedder_and_delegates_identity() -> None:
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner)
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dim, embedder.max_passage_chars) == ("gated@1", DIM, 100)
    assert embedder.inner is inner


def test_a_lone_caller_runs_at_once_even_with_a_long_wait() -> None:
    # With a 10-minute gathering window, a caller on an idle embedder still returns: it must
    # not wait for company.
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner, max_wait_ms=600_000)
    caller = Caller(embedder.embed_queries, ["hello", "world"])
    caller.start()
    caller.finish()
    assert caller.error is None and caller.result is not None
    assert inner.calls == [["hello", "world"]]
    np.testing.assert_array_equal(caller.result, np.stack([vector_of("hello"), vector_of("world")]))


def test_callers_arriving_during_a_batch_share_the_next_inner_call() -> None:
    inner = GatedEmbedder(hold_first=True)
    embedder = BatchingEmbedder(inner, max_wait_ms=0)
    leader = start_held_batch(embedder, inner)
    followers = [Caller(embedder.embed_queries, [f"m{i}", f"n{i}"]) for i in range(3)]
    for f in followers:
        f.start()
    queued(embedder, 3)
    inner.release.set()
    for caller in [leader, *followers]:
        caller.finish()
    assert inner.calls[0] == ["leader"]
    assert len(inner.calls) == 2
    assert sorted(inner.calls[1]) == sorted(t for f in followers for t in f.texts)
    for f in followers:
        assert f.error is None and f.result is not None
        np.testing.assert_array_equal(f.result, np.stack([vector_of(t) for t in f.texts]))
    assert embedder.stats().batches == 2
    assert embedder.stats().largest == 6


def test_a_contended_leader_gathers_until_the_batch_is_full() -> None:
    # The next leader waits (here up to 10 minutes) for max_batch texts: the third follower
    # arrives after the first batch ended and still joins the second inner call.
    inner = GatedEmbedder(hold_first=True)
    embedder = BatchingEmbedder(inner, max_wait_ms=600_000, max_batch=3)
    leader = start_held_batch(embedder, inner)
    early = [Caller(embedder.embed_queries, [f"e{i}"]) for i in range(2)]
    for f in early:
        f.start()
    queued(embedder, 2)
    inner.release.set()
    leader.finish()
    late = Caller(embedder.embed_queries, ["late"])
    late.start()
    for caller in [*early, late]:
        caller.finish()
    assert len(inner.calls) == 2
    assert sorted(inner.calls[1]) == ["e0", "e1", "late"]


def test_batches_respect_max_batch_and_keep_arrival_order() -> None:
    inner = GatedEmbedder(hold_first=True)
    embedder = BatchingEmbedder(inner, max_wait_ms=0, max_batch=2)
    leader = start_held_batch(embedder, inner)
    followers = []
    for i in range(5):
        f = Caller(embedder.embed_queries, [f"q{i}"])
        f.start()
        queued(embedder, i + 1)  # one at a time, so the queue order is known
        followers.append(f)
    inner.release.set()
    for caller in [leader, *followers]:
        caller.finish()
    assert inner.calls == [["leader"], ["q0", "q1"], ["q2", "q3"], ["q4"]]


def test_with_two_running_a_second_batch_starts_while_the_first_runs() -> None:
    inner = GatedEmbedder(hold_first=True)
    embedder = BatchingEmbedder(inner, max_wait_ms=0, max_running=2)
    leader = start_held_batch(embedder, inner)
    second = Caller(embedder.embed_queries, ["second"])
    second.start()
    # The first call is still held: the second reaches the model only by running beside it.
    with inner.changed:
        assert inner.changed.wait_for(lambda: len(inner.calls) == 2, JOIN)
    inner.release.set()
    for caller in (leader, second):
        caller.finish()
    assert inner.calls == [["leader"], ["second"]]


def test_a_call_larger_than_max_batch_runs_whole() -> None:
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner, max_batch=2)
    texts = [f"t{i}" for i in range(5)]
    vectors = embedder.embed_queries(texts)
    assert inner.calls == [texts]
    assert vectors.shape == (5, DIM)


def test_an_error_reaches_only_the_caller_whose_text_causes_it() -> None:
    inner = GatedEmbedder(hold_first=True, bad="poison")
    embedder = BatchingEmbedder(inner, max_wait_ms=0)
    leader = start_held_batch(embedder, inner)
    good1 = Caller(embedder.embed_queries, ["fine"])
    bad = Caller(embedder.embed_queries, ["poison", "also fine"])
    good2 = Caller(embedder.embed_queries, ["fine too"])
    for i, caller in enumerate((good1, bad, good2)):
        caller.start()
        queued(embedder, i + 1)
    inner.release.set()
    for caller in (leader, good1, bad, good2):
        caller.finish()
    assert isinstance(bad.error, IndexUnavailable)
    assert "poison" in str(bad.error)
    for caller in (leader, good1, good2):
        assert caller.error is None and caller.result is not None
        np.testing.assert_array_equal(caller.result, np.stack([vector_of(t) for t in caller.texts]))


def test_a_lone_callers_error_is_raised_to_it() -> None:
    embedder = BatchingEmbedder(GatedEmbedder(bad="poison"))
    with pytest.raises(IndexUnavailable):
        embedder.embed_queries(["poison"])
    # The embedder is still usable afterwards.
    assert embedder.embed_queries(["ok"]).shape == (1, DIM)


def test_identical_texts_are_embedded_once_and_each_caller_gets_its_own_copy() -> None:
    inner = GatedEmbedder(hold_first=True)
    embedder = BatchingEmbedder(inner, max_wait_ms=0)
    leader = start_held_batch(embedder, inner)
    a = Caller(embedder.embed_queries, ["same", "other"])
    b = Caller(embedder.embed_queries, ["same"])
    for i, caller in enumerate((a, b)):
        caller.start()
        queued(embedder, i + 1)
    inner.release.set()
    for caller in (leader, a, b):
        caller.finish()
    assert inner.calls[1] == ["same", "other"]
    assert a.result is not None and b.result is not None
    np.testing.assert_array_equal(a.result[0], b.result[0])
    a.result[0] = 0  # a caller's array is its own
    np.testing.assert_array_equal(b.result[0], vector_of("same"))


@pytest.mark.parametrize("running", [1, 2, 3])
def test_many_threads_each_get_their_own_vectors(running: int) -> None:
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner, max_wait_ms=1, max_batch=8, max_running=running)
    start = threading.Barrier(16)

    def embed(texts: list[str]) -> Vectors:
        start.wait(JOIN)
        return np.concatenate([embedder.embed_queries([t]) for t in texts])

    callers = [Caller(embed, [f"thread {i} message {j}" for j in range(20)]) for i in range(16)]
    for c in callers:
        c.start()
    for c in callers:
        c.finish()
        assert c.error is None and c.result is not None
        np.testing.assert_array_equal(c.result, np.stack([vector_of(t) for t in c.texts]))
    assert sum(len(call) for call in inner.calls) == 16 * 20
    assert max(len(call) for call in inner.calls) <= 8


@pytest.mark.parametrize("running", [1, 2])
def test_the_model_runs_on_its_own_threads_never_on_a_callers(running: int) -> None:
    # Native memory (allocator arenas, oneDNN buffers) is per thread: forward passes on the
    # server's many request threads grew the process by hundreds of MB under load.
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner, max_wait_ms=1, max_batch=4, max_running=running)
    callers = [Caller(embedder.embed_queries, [f"text {i}"]) for i in range(12)]
    for c in callers:
        c.start()
    for c in callers:
        assert c.finish().error is None
    assert 1 <= len(inner.threads) <= running
    assert not inner.threads & {c.ident for c in callers}
    assert threading.get_ident() not in inner.threads


def test_close_stops_the_model_thread_and_a_later_query_starts_a_new_one() -> None:
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner)
    embedder.embed_queries(["first"])
    (first,) = inner.threads
    embedder.close()
    assert not any(t.ident == first and t.is_alive() for t in threading.enumerate())
    embedder.close()  # twice is harmless
    np.testing.assert_array_equal(embedder.embed_queries(["again"])[0], vector_of("again"))


def test_empty_calls_and_passages_go_straight_through() -> None:
    inner = GatedEmbedder()
    embedder = BatchingEmbedder(inner)
    assert embedder.embed_queries([]).shape == (0, DIM)
    vectors = embedder.embed_passages(["a", "b"])
    assert inner.passage_calls == [["a", "b"]]
    assert vectors.shape == (2, DIM)
    assert embedder.stats().batches == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_wait_ms": -1}, "embed_batch_wait_ms"),
        ({"max_batch": 0}, "embed_batch_max"),
        ({"max_running": 0}, "embed_batch_running"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, float], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        BatchingEmbedder(GatedEmbedder(), **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
