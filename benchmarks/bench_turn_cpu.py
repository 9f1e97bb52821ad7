"""CPU per turn with and without the aligned view and the referent links (ADR 0016), one run.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_turn_cpu.py \
        [--sets saltreach,unseen,meridian] [--repeats 3] [--glosses] [--output FILE]

Each hard set's world is imported and indexed twice (vectors memoised in
``benchmarks/.cache``): once under the engine before ADR 0016 (e5 alone, no links) and once
under the defaults (e5 and USE fused, referent links). Queries are embedded by the real models,
as a served turn embeds them: before each measured turn every message but the newest is already
cached (the previous turns embedded them), the newest is not. The two engines take turns, turn
by turn, so the shared machine's noise falls on both alike; the CPU time of the process
(``time.process_time``) around ``select_turn`` is reported as p50/p99 per engine and as the
difference. ``--glosses`` adds a third engine: the defaults on a book whose readers use every
language of the set's chats (at most 8), each entry given a stand-in gloss in each of them (its
title and the head of its lore: the cost of the gloss view, ADR 0023, not its quality). Writes
``benchmarks/results/turn_cpu.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from worldbook.adapters.embedders import load_embedder
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder, percentiles
from worldbook.bench.hard_set import OWNER, load_hard_set
from worldbook.bench.quality import _components, _import_all
from worldbook.core.glosses import GLOSS_LANGUAGES, READER_LANGUAGES_SETTING, Gloss
from worldbook.core.types import ModelProfile
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.glosses import GlossReport, embed_missing_gloss_vectors
from worldbook.service.query_embeddings import QueryEmbeddings
from worldbook.service.services import Services
from worldbook.service.turns import select_turn
from worldbook.settings import WorldbookSettings

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"  # vectors kept between runs
RESULTS = ROOT / "benchmarks" / "results" / "turn_cpu.json"
ENGINES = {
    "baseline (e5 only)": {"aligned_weight": 0.0, "referent_link_weight": 0.0},
    "fused + referents": {},
}


GLOSSED = "fused + referents + glosses (stand-in)"


def _stand_in_glosses(services: Services, book_id: str, languages: list[str]) -> None:
    """Reader languages and a stand-in gloss per entry and language (cost only, ADR 0023)."""
    book = services.books.get_book(book_id)
    settings = {**book.settings, READER_LANGUAGES_SETTING: languages}
    services.books.update_book(book_id, settings=settings)
    entries = services.store.list_entries(book_id)
    glosses = [
        Gloss(e.id, lang, e.title, e.lore[:200].replace("\n", " "), e.content_hash, "stand-in")
        for e in entries
        for lang in languages
    ]
    services.store.save_glosses(book_id, glosses)
    report = GlossReport()
    embed_missing_gloss_vectors(
        book_id,
        entries,
        services.store.book_glosses(book_id),
        store=services.store,
        embedder=services.embedder,
        report=report,
    )
    services.invalidate_books({book_id})


def _engine(settings: WorldbookSettings, world: Path, workdir: Path) -> tuple[Components, str]:
    cache = CACHE
    e5 = load_embedder("e5-small", threads=1)
    use = load_embedder("use-m3", threads=1)
    parts = _components(settings, CachedEmbedder(e5, cache), workdir, CachedEmbedder(use, cache))
    book_id = _import_all(parts.services, [world])[world.name]
    # Turns embed with the real models (indexing above answered from the memo).
    services = parts.services
    services.query_embeddings = QueryEmbeddings(e5)
    if services.aligned is not None:
        services.aligned.queries = QueryEmbeddings(use)
    return parts, book_id


def measure(folder: Path, repeats: int, glosses: bool = False) -> dict[str, Any]:
    hard = load_hard_set(folder)
    profile = ModelProfile(8192, "cl100k_base")
    chosen = {**ENGINES, GLOSSED: {}} if glosses else dict(ENGINES)
    samples: dict[str, list[float]] = {name: [] for name in chosen}
    with tempfile.TemporaryDirectory(prefix="wb-turn-cpu-") as tmp:
        engines = {}
        for i, (name, overrides) in enumerate(chosen.items()):
            settings = WorldbookSettings().model_copy(update=overrides)
            workdir = Path(tmp) / str(i)
            workdir.mkdir()
            engines[name] = _engine(settings, hard.world, workdir)
            if name == GLOSSED:
                languages = sorted({t.lang for t in hard.turns} & GLOSS_LANGUAGES)
                _stand_in_glosses(engines[name][0].services, engines[name][1], languages[:8])
        try:
            for _ in range(repeats):
                for turn in hard.turns:
                    for name, (parts, book_id) in engines.items():
                        services = parts.services
                        services.query_embeddings.clear()
                        earlier = [m.content for m in turn.messages[:-1] if m.content.strip()]
                        services.query_embeddings.prewarm(earlier)
                        if services.aligned is not None:
                            services.aligned.queries.clear()
                            services.aligned.queries.prewarm(earlier)
                        start = time.process_time()
                        select_turn(
                            services,
                            user_id=OWNER,
                            source=BookSource(book_ids=(book_id,)),
                            messages=turn.messages,
                            profile=profile,
                        )
                        samples[name].append(time.process_time() - start)
        finally:
            for parts, _ in engines.values():
                parts.close()
    return {name: percentiles(s) for name, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="saltreach,unseen,meridian")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--glosses", action="store_true", help="add the gloss view's engine")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.perf_counter()
    per_set = {
        name: measure(ROOT / "benchmarks" / "hard_set" / name, args.repeats, args.glosses)
        for name in args.sets.split(",")
    }
    report: dict[str, Any] = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "repeats": args.repeats,
        "cpu_ms_per_turn": per_set,
    }
    base, new = ENGINES
    for name, table in per_set.items():
        delta = table[new]["p50"] - table[base]["p50"]
        table["p50_added_ms"] = round(delta, 3)
        if GLOSSED in table:
            glossed = table[GLOSSED]["p50"] - table[new]["p50"]
            table["p50_glosses_added_ms"] = round(glossed, 3)
            print(f"{name:10} glosses: +{glossed:.2f} ms CPU/turn p50 over the defaults")
        print(
            f"{name:10} CPU/turn p50 {table[base]['p50']:.2f} ms -> {table[new]['p50']:.2f} ms "
            f"(+{delta:.2f} ms); p99 {table[base]['p99']:.2f} -> {table[new]['p99']:.2f}",
            flush=True,
        )
    report["seconds"] = round(time.perf_counter() - started, 1)
    common.write_results(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
