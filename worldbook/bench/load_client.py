"""The clients of ``worldbook bench load``, run in a process of their own.

``python -m worldbook.bench.load_client`` reads one JSON object on stdin (``base``, ``key``,
``book_id``, ``titles``, ``clients``, ``seconds``, ``seed``), runs ``clients`` threads (one
httpx client each) POSTing ``/v1/select`` until ``seconds`` pass, and prints one JSON object:
turns/s, client-side latency percentiles, errors, and the server's own turn time from the
``Server-Timing`` header (so the turn's share of each HTTP latency is known).

The clients live outside the server's process(es), as in ADR 0004's measurement, so their CPU
shows up as what it is: another process on the same cores, not the server's GIL.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from worldbook.bench.common import percentiles

_VOCABULARY = (
    "river mountain empire guild forest harbor citadel desert storm ancient oath crown relic "
    "shadow merchant council dragon temple frontier winter silver iron market prophecy ruin "
    "war treaty moon island bridge library tower legion spirit famine plague tide canyon"
)
WORDS = tuple(_VOCABULARY.split())


_HISTORY = (
    {"role": "user", "content": "We ride north at dawn toward the frontier."},
    {"role": "assistant", "content": "The road is long; the guild watches the bridge."},
    {"role": "user", "content": "Then we cross at the old citadel before the storm."},
    {"role": "assistant", "content": "The merchants of the harbor whisper of a dragon."},
)


class Turns:
    """Endless distinct turns: four recent messages the server has seen (cached after the
    warm-up) and a newest user message that is new every time (a counter and fresh words), so
    every turn embeds exactly one message; about half name an entry, so literal matching and
    vector search both run."""

    def __init__(self, titles: list[str], seed: int) -> None:
        self._titles = titles
        self._seed = seed
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._n = 0

    def next(self) -> list[dict[str, str]]:
        with self._lock:
            self._n += 1
            n, rng = self._n, self._rng
            words = " ".join(rng.choice(WORDS) for _ in range(20))
            named = rng.choice(self._titles) if self._titles and rng.random() < 0.5 else None
        last = f"Turn {self._seed}.{n}: {words}." + (f" What of {named}?" if named else "")
        return [*_HISTORY, {"role": "user", "content": last}]


@dataclass
class _Tally:
    latencies_s: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failed(self, what: str) -> None:
        with self.lock:
            self.errors += 1
            if len(self.error_samples) < 3:
                self.error_samples.append(what[:300])


def _server_ms(header: str | None) -> float | None:
    if not header or "dur=" not in header:
        return None
    return float(header.split("dur=")[1].split(",")[0])


def _client(job: dict[str, Any], turns: Turns, tally: _Tally, deadline: float) -> None:
    import httpx

    headers = {"Authorization": f"Bearer {job['key']}", "X-Worldbook-User": "bench"}
    with httpx.Client(base_url=job["base"], headers=headers, timeout=60) as http:
        first = True  # every client sends at least one turn (the warm-up's model load)
        while first or time.perf_counter() < deadline:
            first = False
            body = {"book_ids": [job["book_id"]], "messages": turns.next()}
            started = time.perf_counter()
            try:
                response = http.post("/v1/select", json=body)
            except httpx.HTTPError as exc:
                tally.failed(f"{type(exc).__name__}: {exc}")
                continue
            took = time.perf_counter() - started
            if response.status_code != 200:
                tally.failed(f"{response.status_code}: {response.text}")
                continue
            server = _server_ms(response.headers.get("server-timing"))
            with tally.lock:
                tally.latencies_s.append(took)
                if server is not None:
                    tally.server_ms.append(server)


def run_clients(job: dict[str, Any]) -> dict[str, Any]:
    """``job['clients']`` threads for ``job['seconds']``; the summary of what they saw."""
    turns = Turns(list(job.get("titles", [])), int(job.get("seed", 1)))
    tally = _Tally()
    started = time.perf_counter()
    deadline = started + float(job["seconds"])
    threads = [
        threading.Thread(target=_client, args=(job, turns, tally, deadline))
        for _ in range(int(job["clients"]))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    lat = percentiles(tally.latencies_s)
    out: dict[str, Any] = {
        "turns": len(tally.latencies_s),
        "errors": tally.errors,
        "error_samples": tally.error_samples,
        "seconds": round(seconds, 2),
        "turns_per_s": round(len(tally.latencies_s) / seconds, 1),
        "p50_ms": round(lat["p50"], 1),
        "p99_ms": round(lat["p99"], 1),
        "mean_ms": round(lat["mean"], 1),
    }
    if tally.server_ms and tally.latencies_s:
        server_mean = statistics.fmean(tally.server_ms)
        out["server_turn_mean_ms"] = round(server_mean, 1)
        out["turn_share_of_latency"] = round(server_mean / (lat["mean"] or 1.0), 3)
    return out


def main() -> None:
    json.dump(run_clients(json.loads(sys.stdin.read())), sys.stdout)


if __name__ == "__main__":
    main()
