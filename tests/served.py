"""An app served by uvicorn on a loopback port in a thread: for clients that need a real
server (the official SDKs, streaming as it happens, benchmarks)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

# How long a test's client waits for the served app's answer. httpx waits 5 s by default; a
# loaded CI machine can take longer to answer a turn (the proxy tests, unit and integration).
TIMEOUT = 60.0


@contextmanager
def serve(app: FastAPI) -> Iterator[str]:
    """The app at ``http://127.0.0.1:<port>`` until the block ends."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", ws="none"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the app did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
