"""LAReQA on XQuAD-R: language-agnostic answer retrieval from one multilingual pool.

Roy, Constant, Al-Rfou, Barua, Phillips & Yang (2020), "LAReQA: Language-agnostic Answer
Retrieval from a Multilingual Pool" (arXiv:2004.05484), §3: every question of XQuAD-R in each of
its 11 languages retrieves from one pool holding every sentence of every paragraph in all 11
languages; a question's relevant set is the sentence that contains its answer, in each of the
11 languages (11 relevant candidates); the metric is mean average precision over the top 20.

The answer sentence of a question in one language is the sentence whose character span
(``sentence_breaks``) contains the answer's ``answer_start`` in that language's file (every one of
the 13,090 questions has exactly one). Candidates are embedded as bare sentences (the e5
passage form), questions as queries.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

LAREQA_LANGUAGES = ("ar", "de", "el", "en", "es", "hi", "ru", "th", "tr", "vi", "zh")
TOP_K = 20

FloatMatrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class LareqaPool:
    sentences: list[str]  # the candidate pool, all languages
    sentence_lang: npt.NDArray[np.int_]  # index into LAREQA_LANGUAGES per sentence
    questions: list[str]  # every question in every language
    question_lang: npt.NDArray[np.int_]
    relevant: list[npt.NDArray[np.int_]]  # per question: pool indices of its answer sentences

    def languages(self) -> tuple[str, ...]:
        return LAREQA_LANGUAGES


def _answer_sentence(breaks: list[list[int]], start: int) -> int:
    for i, (begin, end) in enumerate(breaks):
        if begin <= start < end:
            return i
    raise ValueError(f"answer_start {start} is in no sentence span")


def load_pool(folder: Path) -> LareqaPool:
    """The XQuAD-R pool and questions (files ``<lang>.json``, see the folder's SOURCES.md)."""
    sentences: list[str] = []
    sentence_lang: list[int] = []
    answer_of: dict[str, list[int]] = {}  # question id -> pool index of its answer, per language
    asked: list[tuple[str, int, str]] = []  # (question id, language, text)
    for li, lang in enumerate(LAREQA_LANGUAGES):
        doc = json.loads((folder / f"{lang}.json").read_text(encoding="utf-8"))
        for article in doc["data"]:
            for paragraph in article["paragraphs"]:
                first = len(sentences)
                sentences.extend(paragraph["sentences"])
                sentence_lang.extend([li] * len(paragraph["sentences"]))
                for qa in paragraph["qas"]:
                    at = _answer_sentence(
                        paragraph["sentence_breaks"], qa["answers"][0]["answer_start"]
                    )
                    answer_of.setdefault(qa["id"], []).append(first + at)
                    asked.append((qa["id"], li, qa["question"]))
    return LareqaPool(
        sentences=sentences,
        sentence_lang=np.asarray(sentence_lang),
        questions=[text for _, _, text in asked],
        question_lang=np.asarray([li for _, li, _ in asked]),
        relevant=[np.asarray(sorted(set(answer_of[qid]))) for qid, _, _ in asked],
    )


Scorer = Callable[[FloatMatrix, npt.NDArray[np.int_]], FloatMatrix]
"""``scorer(query_vectors, query_rows)`` -> (queries, pool) scores; ``query_rows`` are the
question indices of the batch (so a scorer may look up each question's language)."""


@dataclass(frozen=True)
class Ranking:
    """Top-``TOP_K`` pool indices per question and the rank of the first same-id answer."""

    top: npt.NDArray[np.int_]  # (questions, TOP_K)


def rank_pool(query_vectors: FloatMatrix, scorer: Scorer, batch: int = 256) -> Ranking:
    """The top ``TOP_K`` candidates of every question (ties broken by pool index)."""
    tops: list[npt.NDArray[np.int_]] = []
    for start in range(0, query_vectors.shape[0], batch):
        rows = np.arange(start, min(start + batch, query_vectors.shape[0]))
        scores = scorer(query_vectors[rows], rows)
        part = np.argpartition(-scores, TOP_K, axis=1)[:, :TOP_K]
        part_scores = np.take_along_axis(scores, part, axis=1)
        order = np.lexsort((part, -part_scores), axis=1)
        tops.append(np.take_along_axis(part, order, axis=1))
    return Ranking(np.concatenate(tops))


def average_precision(top: npt.NDArray[np.int_], relevant: npt.NDArray[np.int_]) -> float:
    """AP@k: precision at each relevant hit in ``top``, over min(|relevant|, k)."""
    hits = np.isin(top, relevant)
    if not hits.any():
        return 0.0
    precision = np.cumsum(hits) / np.arange(1, len(top) + 1)
    return float((precision * hits).sum() / min(len(relevant), len(top)))


def evaluate(pool: LareqaPool, ranking: Ranking) -> dict[str, object]:
    """mAP@20 overall and per question language; R@1 per language (top hit is an answer, in
    any language) and the share of the top 20 in the question's own language."""
    langs = pool.languages()
    ap = np.array([average_precision(ranking.top[i], rel) for i, rel in enumerate(pool.relevant)])
    r1 = np.array([ranking.top[i, 0] in rel for i, rel in enumerate(pool.relevant)])
    same = (pool.sentence_lang[ranking.top] == pool.question_lang[:, None]).mean(axis=1)
    per_lang: dict[str, dict[str, float]] = {}
    for li, lang in enumerate(langs):
        mask = pool.question_lang == li
        per_lang[lang] = {
            "map@20": round(float(ap[mask].mean()), 4),
            "r@1": round(float(r1[mask].mean()), 4),
            "same_lang_top20": round(float(same[mask].mean()), 4),
        }
    return {
        "map@20": round(float(ap.mean()), 4),
        "r@1": round(float(r1.mean()), 4),
        "same_lang_top20": round(float(same.mean()), 4),
        "per_language": per_lang,
    }
