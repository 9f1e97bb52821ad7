"""The proxy's added latency over calling the upstream directly (ADR 0017).

The same OpenAI chat request goes to an upstream directly and through worldbook's proxy (a
real ``uvicorn`` process with a 200-entry book, the fake embedder, a connection to that
upstream), at 1 and 8 concurrent clients, whole and streamed. Two upstreams:

- ``stub`` (``benchmarks/proxy_stub.py``): answers at once / streams 16 chunks 2 ms apart, so
  the difference is the proxy's own cost;
- ``local``: the real local model (xllamacpp + SmolLM2-135M, one thread, 8 output tokens).

Reported per case: p50 / p99 of the whole request (or of time to first token, TTFT, when
streaming), direct and proxied, the p50 added and the ratio; for streams also the per-chunk
overhead (the proxied stream's mean gap between chunks minus the direct one). The reference
the design target names, the ``/v1/select`` turn time (its ``Server-Timing``), is measured in
the same run. Written to ``benchmarks/results/proxy.json`` and ``proxy.md``.

    .venv/bin/python benchmarks/bench_proxy.py [--requests 200] [--skip-local]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from worldbook.adapters.secrets import Sealer
from worldbook.adapters.store import open_store
from worldbook.bench.common import machine, now_iso, versions, write_results
from worldbook.core.connections import ConnectionSpec
from worldbook.core.drafts import BookDraft, EntryDraft

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "proxy.json"
SECRET = "bench secret"
PROXY_TURNS: list[float] = []  # the proxied answers' Server-Timing turn;dur (ms)
MESSAGES = [
    {"role": "system", "content": "You are the narrator of a harbour story."},
    {"role": "user", "content": "We reach the salt towers of Harbour 7 at dusk. Who keeps them?"},
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url} exited")
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not start")


@contextmanager
def _process(command: list[str], env: dict[str, str], probe: str) -> Iterator[None]:
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    try:
        _wait(probe, process)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _database(data_dir: Path, upstreams: dict[str, tuple[str, str | None]]) -> dict[str, Any]:
    """A 200-entry book, an API key and one connection per upstream."""
    store = open_store(f"sqlite:///{data_dir / 'worldbook.db'}")
    try:
        _, key = store.create_api_key("bench")
        book = store.create_book("bench", BookDraft(title="Harbour"))
        drafts = [
            EntryDraft(title=f"Harbour {i}", lore=f"Harbour {i} keeps salt towers and a tide bell.")
            for i in range(200)
        ]
        drafts[0] = EntryDraft(title="Harbour", lore="The harbour city of salt.", canon=True)
        store.add_entries(book.id, drafts)
        tokens = {}
        for name, (url, upstream_key) in upstreams.items():
            spec = ConnectionSpec(name, "openai", url, book_ids=(book.id,), input_window=4096)
            sealed = Sealer(SECRET).seal(upstream_key) if upstream_key else None
            tokens[name] = store.create_connection("bench", spec, sealed)[1]
        return {"key": key, "book": book.id, "tokens": tokens}
    finally:
        store.close()


def _with_lore(base: str, db: dict[str, Any]) -> list[dict[str, str]]:
    """The request the proxy sends upstream, for the direct calls: the model then reads the
    same prompt both ways and the difference is the proxy's own (its selection included)."""
    headers = {"Authorization": f"Bearer {db['key']}", "X-Worldbook-User": "bench"}
    body = {"book_ids": [db["book"]], "message": MESSAGES[1]["content"], "input_window": 4096}
    selection = httpx.post(f"{base}/v1/preview", json=body, headers=headers, timeout=60)
    selection.raise_for_status()
    return [MESSAGES[0], *selection.json()["messages"], *MESSAGES[1:]]


def _timed(
    client: httpx.Client,
    url: str,
    headers: dict[str, str],
    stream: bool,
    messages: list[dict[str, str]] = MESSAGES,
) -> list[float]:
    """[total] for a whole answer; [ttft, gap between chunks ...] for a stream (seconds)."""
    body: dict[str, Any] = {"model": "m", "messages": messages, "max_tokens": 8}
    started = time.perf_counter()
    if not stream:
        answer = client.post(url, json=body, headers=headers)
        took = time.perf_counter() - started
        answer.raise_for_status()
        if "server-timing" in answer.headers and "/openai/" in url:
            PROXY_TURNS.append(float(answer.headers["server-timing"].split("dur=")[1]))
        return [took]
    body |= {"stream": True, "stream_options": {"include_usage": True}}
    marks = []
    with client.stream("POST", url, json=body, headers=headers) as answer:
        answer.raise_for_status()
        for line in answer.iter_lines():
            if line.startswith("data:") and '"content"' in line:
                marks.append(time.perf_counter())
    gaps = [b - a for a, b in itertools.pairwise(marks)]
    return [marks[0] - started, *gaps]


def _run(
    call: Callable[[httpx.Client], list[float]], clients: int, total: int
) -> list[list[float]]:
    out: list[list[float]] = []
    lock = threading.Lock()
    per = max(1, total // clients)

    def worker() -> None:
        with httpx.Client(timeout=600) as client:
            call(client)  # warm the connection
            for _ in range(per):
                sample = call(client)
                with lock:
                    out.append(sample)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return out


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def _case(direct: list[list[float]], proxied: list[list[float]], stream: bool) -> dict[str, Any]:
    first_d, first_p = [s[0] for s in direct], [s[0] for s in proxied]
    row: dict[str, Any] = {
        "direct_p50_ms": round(_pct(first_d, 0.5), 2),
        "direct_p99_ms": round(_pct(first_d, 0.99), 2),
        "proxy_p50_ms": round(_pct(first_p, 0.5), 2),
        "proxy_p99_ms": round(_pct(first_p, 0.99), 2),
    }
    row["added_p50_ms"] = round(row["proxy_p50_ms"] - row["direct_p50_ms"], 2)
    row["ratio_p50"] = round(row["proxy_p50_ms"] / max(row["direct_p50_ms"], 1e-9), 3)
    if stream:
        gap_d = [g for s in direct for g in s[1:]]
        gap_p = [g for s in proxied for g in s[1:]]
        if gap_d and gap_p:
            row["per_chunk_added_ms"] = round(
                (statistics.fmean(gap_p) - statistics.fmean(gap_d)) * 1000, 3
            )
    return row


def _wait_indexed(base: str, key: str, book: str) -> None:
    """Measure a served book: its entries' vectors in place (the server's start sweep)."""
    headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": "bench"}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        state = httpx.get(f"{base}/v1/books/{book}/index", headers=headers, timeout=30).json()
        if state["indexed_share"] >= 1.0:
            return
        time.sleep(0.2)
    raise RuntimeError("the book was not indexed in 300 s")


def _select_ms(base: str, key: str, book: str, repeat: int) -> float:
    """``/v1/select``'s own time for the same turn, in a named chat as the proxy's turns are
    (the chat's request log is written)."""
    headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": "bench"}
    body = {"book_ids": [book], "messages": MESSAGES[1:], "input_window": 4096}
    body["chat_id"] = "bench-select"
    took = []
    with httpx.Client(timeout=60) as client:
        for _ in range(repeat):
            answer = client.post(f"{base}/v1/select", json=body, headers=headers)
            answer.raise_for_status()
            took.append(float(answer.headers["server-timing"].split("dur=")[1]))
    return statistics.median(took)


def _local_model() -> Any:
    sys.path.insert(0, str(ROOT))
    from tests.integration.local_llm import LocalLLMServer, missing_packages

    if missing_packages() is not None:
        return None
    return LocalLLMServer(Path(tempfile.mkdtemp()) / "llm.log").start()


def _measure(
    args: argparse.Namespace, upstreams: dict[str, Any], base: str, db: dict[str, Any]
) -> list[dict[str, Any]]:
    rows = []
    for name, (url, upstream_key) in upstreams.items():
        direct_headers = {"Authorization": f"Bearer {upstream_key}"} if upstream_key else {}
        if name == "local":  # llama.cpp drops a kept-alive connection after a stream
            direct_headers["Connection"] = "close"
        proxy_headers = {"Authorization": f"Bearer {db['tokens'][name]}"}
        total = args.requests if name == "stub" else args.local_requests
        for clients in (1, 8):
            for stream in (False, True):
                direct_call = functools.partial(
                    _timed,
                    url=f"{url}/chat/completions",
                    headers=direct_headers,
                    stream=stream,
                    messages=db["with_lore"],
                )
                proxy_call = functools.partial(
                    _timed,
                    url=f"{base}/openai/v1/chat/completions",
                    headers=proxy_headers,
                    stream=stream,
                )
                direct = _run(direct_call, clients, total)
                proxied = _run(proxy_call, clients, total)
                row = {"upstream": name, "clients": clients, "stream": stream}
                row |= {"metric": "ttft" if stream else "total"}
                rows.append(row | _case(direct, proxied, stream))
                print(rows[-1], flush=True)
    return rows


def _markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Proxy added latency (benchmarks/bench_proxy.py)",
        "",
        f"{report['date']}, {report['machine'].get('cpu', '')}; `/v1/select` turn p50 "
        f"{report['select_turn_p50_ms']:.2f} ms (the design target: added p50 ≤ turn + 5 ms); "
        f"the proxy's own turn (its `Server-Timing`) p50 {report['proxy_turn_p50_ms']:.2f} ms.",
        "",
        "| upstream | clients | metric | direct p50 | proxy p50 | added p50 | × | direct p99 "
        "| proxy p99 | per-chunk added |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['upstream']} | {r['clients']} | {r['metric']} | {r['direct_p50_ms']} | "
            f"{r['proxy_p50_ms']} | {r['added_p50_ms']} | {r['ratio_p50']} | "
            f"{r['direct_p99_ms']} | {r['proxy_p99_ms']} | {r.get('per_chunk_added_ms', '')} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200, help="per case, stub upstream")
    parser.add_argument("--local-requests", type=int, default=24, help="per case, local model")
    parser.add_argument("--skip-local", action="store_true")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stub_port, app_port = _free_port(), _free_port()
    stub_url = f"http://127.0.0.1:{stub_port}/v1"
    local = None if args.skip_local else _local_model()
    upstreams: dict[str, tuple[str, str | None]] = {"stub": (stub_url, None)}
    if local is not None:
        upstreams["local"] = (local.base_url, local.api_key)
    data_dir = Path(tempfile.mkdtemp())
    db = _database(data_dir, upstreams)
    app_env = env | {
        "WORLDBOOK_DATA_DIR": str(data_dir),
        "WORLDBOOK_EMBEDDER": "fake",
        "WORLDBOOK_SECRET_KEY": SECRET,
    }
    stub = [sys.executable, str(ROOT / "benchmarks" / "proxy_stub.py"), str(stub_port)]
    app = [sys.executable, "-m", "uvicorn", "worldbook.api.app:create_app", "--factory"]
    app += ["--port", str(app_port), "--log-level", "warning"]
    base = f"http://127.0.0.1:{app_port}"
    try:
        with _process(stub, env, stub_url), _process(app, app_env, base + "/health"):
            _wait_indexed(base, db["key"], db["book"])
            db["with_lore"] = _with_lore(base, db)
            rows = _measure(args, upstreams, base, db)
            select_ms = _select_ms(base, db["key"], db["book"], 50)
    finally:
        if local is not None:
            local.stop()
    report = {
        "benchmark": "proxy added latency (ADR 0017)",
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(),
        "book_entries": 200,
        "embedder": "fake (the selection's cost is bench_selection's subject)",
        "select_turn_p50_ms": round(select_ms, 2),
        "proxy_turn_p50_ms": round(statistics.median(PROXY_TURNS), 2),
        "rows": rows,
    }
    write_results(RESULTS, report)
    RESULTS.with_suffix(".md").write_text(_markdown(report), encoding="utf-8")
    print(_markdown(report))


if __name__ == "__main__":
    main()
