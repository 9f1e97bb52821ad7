"""HTTP load, in one process: ``POST /v1/select`` against the real app under uvicorn.

A small, self-contained check that the service path holds up under concurrent clients: an
indexed synthetic book of 500 entries (random vectors under the default model's id, as in the
latency suite), ``clients`` threads each sending turns with one new user message, for a fixed
duration. Throughput and client-side latency. Multi-process / multi-replica load belongs to
``benchmarks/bench_load.py``.
"""

from __future__ import annotations

import random
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from worldbook.adapters.store import open_store
from worldbook.bench.common import percentiles
from worldbook.bench.latency import INPUT_WINDOW, WINDOW, _indexed_book, _windows
from worldbook.bench.synthetic import conversation, synthetic_drafts
from worldbook.ports import Embedder
from worldbook.service.components import Components
from worldbook.settings import WorldbookSettings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_load(
    settings: WorldbookSettings,
    embedder: Embedder,
    *,
    quick: bool,
    clients: int = 4,
    step: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    import httpx
    import uvicorn

    from worldbook.api.app import create_app

    duration = 5.0 if quick else 20.0
    rng = random.Random(5)
    drafts = synthetic_drafts(rng, 500, 50)
    windows = _windows(conversation(rng, drafts, 4000), 1500)
    with tempfile.TemporaryDirectory(prefix="wb-bench-load-") as tmp:
        local = settings.model_copy(update={"data_dir": Path(tmp), "broker_url": None})
        store = open_store(f"sqlite:///{Path(tmp) / 'load.db'}")
        parts = Components(local, store=store, embedder=embedder, start_queue=False)
        step("load: building the book")
        book_id = _indexed_book(parts.services, drafts, 500)
        _, key = parts.services.store.create_api_key("bench")
        port = _free_port()
        server = uvicorn.Server(
            uvicorn.Config(create_app(components=parts), host="127.0.0.1", port=port,
                           log_level="warning")
        )  # fmt: skip
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        headers = {"X-API-Key": key, "X-Worldbook-User": "bench"}
        url = f"http://127.0.0.1:{port}/v1/select"
        latencies: list[float] = []
        errors = 0
        lock = threading.Lock()
        stop_at = 0.0

        def client(offset: int) -> None:
            nonlocal errors
            with httpx.Client(headers=headers, timeout=30) as http:
                i = offset
                while time.perf_counter() < stop_at:
                    window = windows[i % len(windows)]
                    body = {
                        "book_ids": [book_id],
                        "input_window": INPUT_WINDOW,
                        "messages": [{"role": m.role, "content": m.content} for m in window],
                    }
                    started = time.perf_counter()
                    response = http.post(url, json=body)
                    elapsed = time.perf_counter() - started
                    with lock:
                        if response.status_code == 200:
                            latencies.append(elapsed)
                        else:
                            errors += 1
                    i += clients

        try:
            step("load: warm-up")
            with httpx.Client(headers=headers, timeout=60) as http:
                for window in windows[:3]:
                    http.post(url, json={"book_ids": [book_id], "input_window": INPUT_WINDOW,
                                         "messages": [{"role": m.role, "content": m.content}
                                                      for m in window]})  # fmt: skip
            step(f"load: {clients} clients for {duration:.0f} s")
            stop_at = time.perf_counter() + duration
            workers = [threading.Thread(target=client, args=(c + 3,)) for c in range(clients)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
        finally:
            server.should_exit = True
            thread.join(10)
            parts.close()
    return {
        "entries": 500,
        "clients": clients,
        "duration_s": duration,
        "messages_per_turn": WINDOW,
        "requests": len(latencies),
        "errors": errors,
        "requests_per_s": round(len(latencies) / duration, 1),
        "latency_ms": percentiles(latencies),
    }
