"""Cross-lingual retrieval on XQuAD: English paragraphs as entries, questions in 12 languages.

Every method ranks the same pool for the same questions in the same run:

* ``worldbook:<embedder>`` — the engine's own path: entry text + chunking
  (``worldbook.core.embed_text``), the embedder adapter, ``FaissIndex`` (best chunk, merge
  across books; the model's language correction when it ships one, as the service does).
  Every paragraph is titled "Paragraph" (``NEUTRAL_TITLE``) so the title gives nothing away:
  numbered titles ("Paragraph 17") matched the numbers in questions about other paragraphs and
  cost up to 0.011 R@5 that no real title would (docs/decisions.md).
* ``raw:<default embedder>`` — the same model on the bare paragraph and bare question,
  brute-force cosine (the engine must be within 0.01 of it).
* ``st-vector-storage`` — SillyTavern Vector Storage as documented (peers.md §1.2): entry
  content only, English MiniLM, top 5 above a 0.25 score; anything else counts as not found.
* ``list-order`` — no retrieval: the entry's position in the list is its rank.

The keyword scan has nothing to match here (paragraphs carry no keys) and is not listed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.language_correction import LanguageCorrection
from worldbook.bench.peers import ST_VECTOR_THRESHOLD, ST_VECTOR_TOP_K
from worldbook.core.embed_text import passage_texts
from worldbook.core.query import DEFAULT_COMBINATION, QueryCombination
from worldbook.ports import BookVectors, Embedder, Vectors
from worldbook.service.entry_languages import entry_language

NEUTRAL_TITLE = "Paragraph"
"""The title of every XQuAD entry: the same for all, so it carries no information."""
LANGUAGES = ("en", "ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")
BOOKS = 4
NOT_FOUND = 10**9
QUICK_PARAGRAPHS = 60  # seeded sample (``quick_pool``), shared with benchmarks/bench_xquad.py
QUICK_QUESTIONS = 30  # per language


@dataclass(frozen=True)
class XquadData:
    paragraphs: list[str]  # English contexts of the pool, in list order
    book_of: list[str]  # book id of each pool paragraph
    questions: dict[str, list[tuple[int, str]]]  # language -> (pool index, question)


def read_english(folder: Path) -> tuple[list[str], list[str], dict[str, int]]:
    """All English paragraphs in file order, the book id of each (article number mod
    ``BOOKS``), and question id -> paragraph index."""
    english = json.loads((folder / "xquad.en.json").read_text(encoding="utf-8"))["data"]
    paragraphs: list[str] = []
    book_of: list[str] = []
    gold: dict[str, int] = {}
    for article_no, article in enumerate(english):
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                gold[qa["id"]] = len(paragraphs)
            paragraphs.append(paragraph["context"])
            book_of.append(f"book-{article_no % BOOKS}")
    return paragraphs, book_of, gold


def read_questions(folder: Path, lang: str, gold: dict[str, int]) -> list[tuple[int, str]]:
    """(English paragraph index, question) for every question of one language."""
    data = json.loads((folder / f"xquad.{lang}.json").read_text(encoding="utf-8"))["data"]
    return [
        (gold[qa["id"]], qa["question"])
        for article in data
        for paragraph in article["paragraphs"]
        for qa in paragraph["qas"]
    ]


def quick_pool(n_paragraphs: int) -> list[int]:
    """The seeded ``QUICK_PARAGRAPHS`` paragraph indices every ``--quick`` run uses."""
    return sorted(random.Random(7).sample(range(n_paragraphs), QUICK_PARAGRAPHS))


def load_xquad(folder: Path, *, quick: bool) -> XquadData:
    """The 240 English paragraphs (or a seeded 60) and their questions in every language."""
    paragraphs, book_of, gold = read_english(folder)
    pool = quick_pool(len(paragraphs)) if quick else list(range(len(paragraphs)))
    position = {p: i for i, p in enumerate(pool)}
    questions: dict[str, list[tuple[int, str]]] = {}
    for lang in LANGUAGES:
        found = [(position[p], q) for p, q in read_questions(folder, lang, gold) if p in position]
        if quick and len(found) > QUICK_QUESTIONS:
            found = random.Random(f"xquad-{lang}").sample(found, QUICK_QUESTIONS)
        questions[lang] = found
    return XquadData([paragraphs[p] for p in pool], [book_of[p] for p in pool], questions)


def metrics(ranks: Sequence[int]) -> dict[str, float]:
    r = np.asarray(ranks, dtype=np.float64)
    return {
        "r@1": round(float((r <= 1).mean()), 4),
        "r@5": round(float((r <= 5).mean()), 4),
        "mrr": round(float((1.0 / r).mean()), 4),
        "n": len(ranks),
    }


Table = dict[str, dict[str, float]]


def paragraph_index(
    paragraphs: Sequence[tuple[int, str, str]],
    embedder: Embedder,
    *,
    max_units: int,
    combination: QueryCombination = DEFAULT_COMBINATION,
    correction: LanguageCorrection | None = None,
) -> tuple[FaissIndex, int]:
    """A ``FaissIndex`` over (number, book id, text) paragraphs as entries ``p<number>`` of
    ``BOOKS`` books, each chunked as the engine chunks an entry titled ``NEUTRAL_TITLE``; and
    how many rows (chunks) it holds. With a language ``correction`` rows are centred by each
    paragraph's language as the service guesses it."""
    rows: dict[str, tuple[list[str], list[str]]] = {f"book-{b}": ([], []) for b in range(BOOKS)}
    for number, book_id, context in paragraphs:
        ids, texts = rows[book_id]
        for text in passage_texts(NEUTRAL_TITLE, (), context, max_units):
            ids.append(f"p{number}")
            texts.append(text)
    vectors = {
        b: BookVectors(ids, embedder.embed_passages(texts)) for b, (ids, texts) in rows.items()
    }
    n_rows = sum(len(v.entry_ids) for v in vectors.values())
    languages = {f"p{n}": entry_language(NEUTRAL_TITLE, text) for n, _, text in paragraphs}
    index = FaissIndex(
        lambda book_id: vectors[book_id],
        combination=combination,
        correction=correction,
        languages=lambda _: languages,
    )
    return index, n_rows


def engine_method(
    data: XquadData, embedder: Embedder, correction: LanguageCorrection | None = None
) -> Table:
    """The engine's path (chunked entry text, FaissIndex, default query combination, the
    language ``correction`` of the model when the service would apply one)."""
    index, _ = paragraph_index(
        [(i, data.book_of[i], context) for i, context in enumerate(data.paragraphs)],
        embedder,
        max_units=embedder.max_passage_chars,
        correction=correction,
    )
    books = [f"book-{b}" for b in range(BOOKS)]
    out: Table = {}
    for lang, qs in data.questions.items():
        q_vectors = embedder.embed_queries([q for _, q in qs])
        ranks = []
        for (gold, _), vector in zip(qs, q_vectors, strict=True):
            hits = [h.entry_id for h in index.search(books, vector[None, :], len(data.paragraphs))]
            ranks.append(hits.index(f"p{gold}") + 1 if f"p{gold}" in hits else NOT_FOUND)
        out[lang] = metrics(ranks)
    return out


def _cosine_method(
    data: XquadData, embedder: Embedder, rank: Callable[[Vectors, list[int]], list[int]]
) -> Table:
    """Bare paragraphs vs bare questions by brute-force cosine, per language: ``rank`` turns the
    (question × paragraph) scores and the gold paragraphs into the gold ranks."""
    passages = embedder.embed_passages(data.paragraphs)
    out: Table = {}
    for lang, qs in data.questions.items():
        scores = embedder.embed_queries([q for _, q in qs]) @ passages.T
        out[lang] = metrics(rank(scores, [g for g, _ in qs]))
    return out


def _rank_all(scores: Vectors, gold: list[int]) -> list[int]:
    gold_scores = scores[np.arange(len(gold)), np.array(gold)]
    return list(((scores > gold_scores[:, None]).sum(axis=1) + 1).tolist())


def _rank_top_k(scores: Vectors, gold: list[int]) -> list[int]:
    ranks = []
    for row, g in zip(scores, gold, strict=True):
        top = [int(i) for i in np.argsort(-row, kind="stable")[:ST_VECTOR_TOP_K]]
        top = [i for i in top if row[i] >= ST_VECTOR_THRESHOLD]
        ranks.append(top.index(g) + 1 if g in top else NOT_FOUND)
    return ranks


def raw_method(data: XquadData, embedder: Embedder) -> Table:
    """Bare paragraph vs bare question, brute-force cosine: the model's own ceiling."""
    return _cosine_method(data, embedder, _rank_all)


def vector_storage_method(data: XquadData, minilm: Embedder) -> Table:
    """peers.md §1.2: content only, top 5 above 0.25; outside that list = not found."""
    return _cosine_method(data, minilm, _rank_top_k)


def list_order_method(data: XquadData) -> Table:
    return {lang: metrics([g + 1 for g, _ in qs]) for lang, qs in data.questions.items()}


def run_xquad(
    data: XquadData,
    *,
    default: tuple[str, Embedder],
    others: Sequence[tuple[str, Embedder]],
    minilm: Embedder,
    step: Callable[[str], None] = lambda _: None,
    correction: LanguageCorrection | None = None,
) -> dict[str, Any]:
    """Every method on the same pool and questions. Returns ``{"methods": {name: table}}``.
    ``correction`` is the default embedder's language correction (as the service applies it)."""
    spec, embedder = default
    methods: dict[str, Table] = {}
    step(f"XQuAD worldbook:{spec}")
    methods[f"worldbook:{spec}"] = engine_method(data, embedder, correction)
    step(f"XQuAD raw:{spec}")
    methods[f"raw:{spec}"] = raw_method(data, embedder)
    for other_spec, other in others:
        step(f"XQuAD worldbook:{other_spec}")
        methods[f"worldbook:{short_name(other_spec)}"] = engine_method(data, other)
    step("XQuAD st-vector-storage")
    methods["st-vector-storage"] = vector_storage_method(data, minilm)
    methods["list-order"] = list_order_method(data)
    return {
        "pool": len(data.paragraphs),
        "questions_per_language": {k: len(v) for k, v in data.questions.items()},
        "methods": methods,
    }


def short_name(spec: str) -> str:
    """Method-name form of an embedder spec (``sentence-transformers:x`` → ``st:x``)."""
    return spec.replace("sentence-transformers:", "st:")


def summary(table: Table) -> dict[str, float]:
    """Min R@5 over all languages and mean R@5 over the 11 non-English ones."""
    r5 = {lang: table[lang]["r@5"] for lang in LANGUAGES if lang in table}
    non_en = [v for lang, v in r5.items() if lang != "en"]
    return {
        "min_r@5": min(r5.values()),
        "mean_r@5_non_en": round(float(np.mean(non_en)), 4),
    }
