"""What glosses give when they are well written (ADR 0023): XQuAD with reference gists.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_glosses_xquad.py \
        [--samples DIR] [--margins 0,0.02,0.05] [--output FILE]

The hard sets' glosses need a capable model, which does not run offline here. XQuAD gives a
stand-in that is not the test: its paragraphs were translated by people into 11 languages. The
lore is the 240 English paragraphs (the engine path: chunked entries titled "Paragraph" in four
books, ``FaissIndex``, e5-small with the language correction); a paragraph's gloss in language L
is the first sentence of its human translation into L (what a good model's one-line gist
approximates; the name is the neutral title). Each language's questions rank the paragraphs by
the primary index and by the gloss view of their language (``GlossViews``, one pass over the
paragraphs' own rows and the gloss rows) at each margin. The questions ask about details,
mostly not in the first sentence, so this measures how far a topic gist in the reader's
language carries, not what a whole translation would. The aligned view is left out to isolate
the glosses. Vectors memoised in ``benchmarks/.cache``; writes
``benchmarks/results/glosses_xquad.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.language_correction import LanguageCorrection, load_language_correction
from worldbook.bench import common
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.xquad import (
    BOOKS,
    NEUTRAL_TITLE,
    NOT_FOUND,
    XquadData,
    load_xquad,
    metrics,
)
from worldbook.core.embed_text import passage_texts
from worldbook.core.glosses import GLOSS_GIST_MAX
from worldbook.ports import BookVectors, Embedder, VectorIndex
from worldbook.service.entry_languages import entry_language
from worldbook.service.gloss_view import GLOSS_ROW, GlossViews, gloss_row_languages
from worldbook.settings import WorldbookSettings

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = (ROOT.parent / "shared" / "samples").resolve()
CACHE = ROOT / "benchmarks" / ".cache"
RESULTS = ROOT / "benchmarks" / "results" / "glosses_xquad.json"
KEYS = ("r@1", "r@5", "mrr")
FIRST_SENTENCE = re.compile(r"^(.+?[.!?。！？।؟])(?:\s|$)", re.DOTALL)


def first_sentence(text: str) -> str:
    """The first sentence of a paragraph, on one line, at most a gist's length."""
    found = FIRST_SENTENCE.match(text.strip())
    sentence = found.group(1) if found else text.strip()
    return " ".join(sentence.split())[:GLOSS_GIST_MAX]


def translated_paragraphs(folder: Path, lang: str) -> list[str]:
    """Every paragraph of ``xquad.<lang>.json`` in file order (the English file's order)."""
    data = json.loads((folder / f"xquad.{lang}.json").read_text(encoding="utf-8"))["data"]
    return [p["context"] for article in data for p in article["paragraphs"]]


def own_rows(
    paragraphs: list[str], book_of: list[str], embedder: Embedder
) -> dict[str, BookVectors]:
    """Each book's rows as the engine stores an entry's chunks."""
    texts: dict[str, tuple[list[str], list[str]]] = {f"book-{b}": ([], []) for b in range(BOOKS)}
    for number, (context, book) in enumerate(zip(paragraphs, book_of, strict=True)):
        ids, chunks = texts[book]
        for chunk in passage_texts(NEUTRAL_TITLE, (), context, embedder.max_passage_chars):
            ids.append(f"p{number}")
            chunks.append(chunk)
    return {b: BookVectors(ids, embedder.embed_passages(t)) for b, (ids, t) in texts.items()}


def gloss_rows(gists: list[str], book_of: list[str], embedder: Embedder) -> dict[str, BookVectors]:
    """Each book's gloss rows (``name\\ngist``, as :func:`gloss_text` makes them)."""
    vectors = embedder.embed_passages([f"{NEUTRAL_TITLE}\n{g}" for g in gists])
    out: dict[str, BookVectors] = {}
    for b in range(BOOKS):
        book = f"book-{b}"
        rows = [i for i, x in enumerate(book_of) if x == book]
        out[book] = BookVectors([f"{GLOSS_ROW}p{i}" for i in rows], vectors[rows])
    return out


def ranks(index: Any, questions: list[tuple[int, str]], embedder: Embedder, n: int) -> list[int]:
    """The gold paragraph's rank for each question (``index.search`` or ``GlossViews.search``)."""
    books = [f"book-{b}" for b in range(BOOKS)]
    vectors = embedder.embed_queries([q for _, q in questions])
    found = []
    for (gold, _), vector in zip(questions, vectors, strict=True):
        hits = [h.entry_id for h in index(books, vector[None, :], n)]
        found.append(hits.index(f"p{gold}") + 1 if f"p{gold}" in hits else NOT_FOUND)
    return found


@dataclass(frozen=True)
class Pool:
    """The English paragraphs as the engine indexes them, built once for every language."""

    data: XquadData
    own: dict[str, BookVectors]
    languages: dict[str, str]
    primary: FaissIndex
    correction: LanguageCorrection | None


def english_pool(data: XquadData, e5: Embedder, correction: LanguageCorrection | None) -> Pool:
    own = own_rows(data.paragraphs, data.book_of, e5)
    languages = {f"p{n}": entry_language(NEUTRAL_TITLE, p) for n, p in enumerate(data.paragraphs)}
    primary = FaissIndex(lambda b: own[b], correction=correction, languages=lambda _: languages)
    return Pool(data, own, languages, primary, correction)


def language_row(
    lang: str, gists: list[str], pool: Pool, e5: Embedder, margins: list[float]
) -> dict[str, Any]:
    """One language's questions ranked by the primary index and by its gloss view at each
    margin (the gloss rows: ``gists``, one per paragraph)."""
    glossed = gloss_rows(gists, pool.data.book_of, e5)

    def load(book: str) -> BookVectors:
        a, b = pool.own[book], glossed[book]
        return BookVectors(a.entry_ids + b.entry_ids, np.concatenate([a.vectors, b.vectors]))

    def make_index(language: str) -> VectorIndex:
        rows = gloss_row_languages(lambda _: pool.languages, language)
        return FaissIndex(load, correction=pool.correction, languages=rows)

    questions, n = pool.data.questions[lang], len(pool.data.paragraphs)
    row = {"primary": metrics(ranks(pool.primary.search, questions, e5, n))}
    for margin in margins:
        views = GlossViews(make_index, margin)

        def search(books: list[str], q: Any, k: int, v: GlossViews = views) -> Any:
            return v.search(lang, books, q, k)

        row[f"glosses, margin {margin:g}"] = metrics(ranks(search, questions, e5, n))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    parser.add_argument("--margins", default="0,0.02,0.05")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.perf_counter()
    folder = args.samples / "xquad"
    data = load_xquad(folder, quick=False)
    e5 = CachedEmbedder(load_embedder("e5-small", threads=1), CACHE)
    shrink = WorldbookSettings().language_centring_shrink
    correction = load_language_correction(e5.model_id, shrink=shrink)
    margins = [float(x) for x in args.margins.split(",")]
    pool = english_pool(data, e5, correction)
    table: dict[str, dict[str, Any]] = {}
    for lang in (x for x in data.questions if x != "en"):
        gists = [first_sentence(p) for p in translated_paragraphs(folder, lang)]
        table[lang] = row = language_row(lang, gists, pool, e5, margins)
        cells = [f"{k}: R@1 {m['r@1']:.3f} R@5 {m['r@5']:.3f}" for k, m in row.items()]
        print(f"{lang}  {'  '.join(cells)}", flush=True)
    names = list(next(iter(table.values())))
    mean = {
        name: {k: round(float(np.mean([row[name][k] for row in table.values()])), 4) for k in KEYS}
        for name in names
    }
    print("mean", json.dumps(mean))
    report = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "gloss": "first sentence of XQuAD's human translation (a stand-in for a capable model)",
        "per_language": table,
        "mean_non_english": mean,
        "seconds": round(time.perf_counter() - started, 1),
    }
    common.write_results(args.output, report)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
