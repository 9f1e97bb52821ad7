"""The background usage recorder: order kept, flush waits, bounded backlog, errors contained."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from worldbook.errors import StorageUnavailable
from worldbook.service.usage_recorder import UsageRecorder


class Sink:
    def __init__(self, gate: threading.Event | None = None, fail: bool = False) -> None:
        self.calls: list[tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = []
        self.gate = gate
        self.fail = fail

    def record_turn_usage(self, book_ids: Sequence[str], uses: Sequence[tuple[str, str]]) -> None:
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail:
            raise StorageUnavailable("database down")
        self.calls.append((tuple(book_ids), tuple(uses)))


def test_turns_are_written_in_order_and_flush_waits() -> None:
    sink = Sink()
    recorder = UsageRecorder(sink)
    for i in range(50):
        recorder.record([f"b{i}"], [(f"e{i}", "full")])
    assert recorder.flush()
    assert [c[0][0] for c in sink.calls] == [f"b{i}" for i in range(50)]
    assert recorder.pending() == 0 and recorder.written == 50
    recorder.close()


def test_full_backlog_drops_instead_of_blocking() -> None:
    gate = threading.Event()
    sink = Sink(gate)
    recorder = UsageRecorder(sink, max_pending=3)
    for i in range(10):
        recorder.record(["b"], [(f"e{i}", "index")])  # never blocks, even with the writer stuck
    assert recorder.dropped >= 6
    gate.set()
    recorder.close()
    assert len(sink.calls) + recorder.dropped == 10


def test_close_drops_what_it_could_not_write_in_time() -> None:
    gate = threading.Event()
    sink = Sink(gate)
    recorder = UsageRecorder(sink)
    for i in range(5):
        recorder.record(["b"], [(f"e{i}", "full")])
    recorder.close(timeout=0.2)  # the writer is stuck on the first turn
    gate.set()
    assert recorder.dropped >= 4
    assert len(sink.calls) <= 1  # nothing written after close, except the turn in flight


def test_write_errors_are_counted_not_raised() -> None:
    recorder = UsageRecorder(Sink(fail=True))
    recorder.record(["b"], [("e", "canon")])
    assert recorder.flush()
    assert recorder.failed == 1
    recorder.close()
    recorder.record(["b"], [("e", "canon")])  # after close: ignored, no thread restarted
    assert recorder.pending() == 0
