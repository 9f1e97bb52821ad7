"""The FAISS vector index: exactness against brute-force numpy, caching, errors."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.core.embed_text import best_per_entry
from worldbook.core.query import Method, QueryCombination, combine_scores
from worldbook.core.types import SemanticHit
from worldbook.errors import BookNotFound, IndexUnavailable, InvalidInput
from worldbook.ports import BookVectors as BookVectorsWithHashes
from worldbook.ports import VectorIndex, Vectors

BookVectors = tuple[list[str], Vectors]  # what a test loader returns: every row current

DIM = 16


def _unit(rng: np.random.Generator, rows: int, dim: int = DIM) -> np.ndarray:
    matrix = rng.standard_normal((rows, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _random_books(rng: np.random.Generator, n_books: int) -> dict[str, BookVectors]:
    """Books of chunked entries (1–3 rows each, rows shuffled), with exact duplicate vectors
    across entries and books so that ties happen."""
    books: dict[str, BookVectors] = {}
    shared = _unit(rng, 3)
    for b in range(n_books):
        ids: list[str] = []
        for e in range(int(rng.integers(0, 12))):
            ids.extend([f"b{b}-e{e:02d}"] * int(rng.integers(1, 4)))
        rng.shuffle(ids)
        vectors = _unit(rng, len(ids))
        for row in range(len(ids)):
            if rng.random() < 0.25:  # a tie with other rows holding the same shared vector
                vectors[row] = shared[int(rng.integers(0, 3))]
        books[f"book-{b}"] = (ids, vectors)
    return books


def _brute_force(
    books: dict[str, BookVectors],
    book_ids: Sequence[str],
    queries: np.ndarray,
    k: int,
    combination: QueryCombination,
) -> list[SemanticHit]:
    """The specification: numpy scores, the core combination, best chunk, sort with tie-break.

    Scores are elementwise products summed in float64 (no BLAS): identical vectors get
    bit-identical scores, so ties here are exactly the ties of the data.
    """
    searched = [(p, b) for p, b in enumerate(dict.fromkeys(book_ids)) if books[b][0]]
    if not searched:
        return []
    # Messages combine over the rows of all the searched books together (centring uses them all).
    vectors = np.concatenate([books[b][1] for _, b in searched]).astype(np.float64)
    products = queries.astype(np.float64)[:, None, :] * vectors[None]
    combined = combine_scores(products.sum(axis=2), combination).tolist()
    hits: list[tuple[float, int, str, str]] = []
    offset = 0
    for position, book_id in searched:
        ids = books[book_id][0]
        scores = combined[offset : offset + len(ids)]
        offset += len(ids)
        for entry_id, score in best_per_entry(ids, scores).items():
            hits.append((score, position, entry_id, book_id))
    hits.sort(key=lambda h: (-h[0], h[1], h[2]))
    return [SemanticHit(b, e, s) for s, _, e, b in hits[:k]]


def _index(books: dict[str, BookVectors], **kwargs: object) -> FaissIndex:
    return FaissIndex(lambda book_id: books[book_id], **kwargs)  # type: ignore[arg-type]


NEWEST = QueryCombination(Method.NEWEST)
COMBINATIONS = [QueryCombination(method, 0.5) for method in Method]  # decay: recency ones only


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 100_000),
    n_books=st.integers(1, 4),
    messages=st.integers(1, 6),
    k=st.integers(1, 40),
    combination=st.sampled_from(COMBINATIONS),
)
def test_oracle_faiss_equals_brute_force(
    seed: int, n_books: int, messages: int, k: int, combination: QueryCombination
) -> None:
    rng = np.random.default_rng(seed)
    books = _random_books(rng, n_books)
    queries = _unit(rng, messages)
    if rng.random() < 0.3:  # a query equal to a stored vector: exact top score ties
        queries[-1] = next(iter(books.values()))[1][0] if books["book-0"][0] else queries[-1]
    book_ids = list(books)
    rng.shuffle(book_ids)
    got = _index(books, combination=combination).search(book_ids, queries, k)
    want = _brute_force(books, book_ids, queries, k, combination)
    assert [(h.book_id, h.entry_id) for h in got] == [(h.book_id, h.entry_id) for h in want]
    assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-5)


def test_ties_break_by_book_order_then_entry_id() -> None:
    vector = _unit(np.random.default_rng(1), 1)
    books = {
        "x": (["x-b", "x-a"], np.repeat(vector, 2, axis=0)),
        "y": (["y-a"], vector.copy()),
    }
    hits = _index(books, combination=NEWEST).search(["y", "x"], vector, k=3)
    assert [(h.book_id, h.entry_id) for h in hits] == [("y", "y-a"), ("x", "x-a"), ("x", "x-b")]
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)  # a cosine: NEWEST does not centre


def test_entry_scores_by_its_best_chunk_and_appears_once() -> None:
    query = np.eye(1, DIM, 0, dtype=np.float32)
    far = np.eye(1, DIM, 1, dtype=np.float32)
    books = {"b": (["long", "long", "short"], np.vstack([far, query, 0.5 * query + 0.5 * far]))}
    hits = _index(books, combination=NEWEST).search(["b"], query, k=5)
    assert [h.entry_id for h in hits] == ["long", "short"]
    assert hits[0].score == pytest.approx(1.0)


def test_is_a_vector_index() -> None:
    assert isinstance(_index({}), VectorIndex)


def test_searches_run_on_one_openmp_thread() -> None:
    # Small per-turn searches lose to OpenMP fan-out, and spin when cores are short
    # (docs/design/semantic-search.md).
    import faiss

    faiss.omp_set_num_threads(2)
    _index({})
    assert faiss.omp_get_max_threads() == 1


def test_books_are_cached_and_evicted_least_recently_used() -> None:
    rng = np.random.default_rng(2)
    books = {name: (["e1", "e2"], _unit(rng, 2)) for name in "abc"}
    loads: list[str] = []

    def loader(book_id: str) -> BookVectors:
        loads.append(book_id)
        return books[book_id]

    index = FaissIndex(loader, max_books=2)
    query = _unit(rng, 1)
    for book_id in ["a", "b", "a", "c", "a", "b"]:
        index.search([book_id], query, k=1)
    # b was least recently used when c arrived, so only b is loaded again
    assert loads == ["a", "b", "c", "b"]
    assert index.cached_books == ["a", "b"]


def test_cache_is_bounded_by_bytes() -> None:
    rng = np.random.default_rng(3)
    books = {name: ([f"e{i}" for i in range(10)], _unit(rng, 10)) for name in "abcd"}
    one_book = FaissIndex(lambda b: books[b])
    one_book.search(["a"], _unit(rng, 1), k=1)
    size = one_book.cached_bytes
    index = FaissIndex(lambda b: books[b], max_bytes=2 * size)
    index.search(["a", "b", "c"], _unit(rng, 1), k=1)
    assert index.cached_books == ["b", "c"]
    assert index.cached_bytes == 2 * size
    tiny = FaissIndex(lambda b: books[b], max_bytes=size - 1)
    assert tiny.search(["a"], books["a"][1][:1], k=1)[0].entry_id == "e0"  # searched, not kept
    assert tiny.cached_books == []


def test_invalidate_reloads_the_book() -> None:
    rng = np.random.default_rng(4)
    vectors = _unit(rng, 2)
    current = {"b": (["old"], vectors[:1])}
    index = FaissIndex(lambda b: current[b])
    assert index.search(["b"], vectors[:1], k=1)[0].entry_id == "old"
    current["b"] = (["new"], vectors[1:])
    assert index.search(["b"], vectors[:1], k=1)[0].entry_id == "old"  # cached
    index.invalidate("b")
    assert index.search(["b"], vectors[:1], k=1)[0].entry_id == "new"


def test_an_index_built_while_invalidated_is_not_cached() -> None:
    rng = np.random.default_rng(5)
    vectors = _unit(rng, 1)
    holder: list[FaissIndex] = []

    def loader(book_id: str) -> BookVectors:
        holder[0].invalidate(book_id)  # the book changes while its vectors are read
        return ["e"], vectors

    index = FaissIndex(loader)
    holder.append(index)
    assert index.search(["b"], vectors, k=1)[0].entry_id == "e"
    assert index.cached_books == []


def test_empty_books_and_duplicates_are_handled() -> None:
    rng = np.random.default_rng(6)
    books: dict[str, BookVectors] = {
        "empty": ([], np.zeros((0, 0), dtype=np.float32)),
        "full": (["e"], _unit(rng, 1)),
    }
    hits = _index(books).search(["empty", "full", "full"], books["full"][1], k=10)
    assert [h.entry_id for h in hits] == ["e"]


def test_errors_are_translated() -> None:
    rng = np.random.default_rng(7)
    books: dict[str, BookVectors] = {
        "dim": (["e"], _unit(rng, 1, dim=8)),
        "rows": (["e", "f"], _unit(rng, 1)),
    }

    def broken(book_id: str) -> BookVectors:
        if book_id == "gone":
            raise BookNotFound("no such book")
        if book_id in books:
            return books[book_id]
        raise RuntimeError("database exploded")

    index = FaissIndex(broken)
    query = _unit(rng, 1)
    with pytest.raises(IndexUnavailable, match="dimension"):
        index.search(["dim"], query, k=1)
    with pytest.raises(IndexUnavailable, match="entry ids"):
        index.search(["rows"], query, k=1)
    with pytest.raises(IndexUnavailable, match="database exploded"):
        index.search(["other"], query, k=1)
    with pytest.raises(BookNotFound):  # worldbook errors pass through untouched
        index.search(["gone"], query, k=1)
    with pytest.raises(InvalidInput):
        index.search(["dim"], query, k=0)
    with pytest.raises(InvalidInput):
        index.search(["dim"], query[0], k=1)
    with pytest.raises(InvalidInput):
        FaissIndex(broken, max_books=0)


def test_concurrent_searches_agree_with_sequential_ones() -> None:
    rng = np.random.default_rng(8)
    books = _random_books(rng, 4)
    queries = [_unit(rng, 3) for _ in range(20)]
    expected = [_index(books).search(list(books), q, k=5) for q in queries]
    shared = _index(books, max_books=2)  # small cache: evictions race with searches
    results: dict[int, list[SemanticHit]] = {}

    def work(i: int) -> None:
        for _ in range(5):
            results[i] = shared.search(list(books), queries[i], k=5)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(queries))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, want in enumerate(expected):
        assert [(h.book_id, h.entry_id) for h in results[i]] == [
            (h.book_id, h.entry_id) for h in want
        ]


def test_indexed_entries_are_the_entries_with_vectors() -> None:
    rng = np.random.default_rng(9)
    books: dict[str, BookVectors] = {
        "b": (["e1", "e2", "e1"], _unit(rng, 3)),
        "empty": ([], np.zeros((0, 0), dtype=np.float32)),
    }
    index = _index(books)
    assert set(index.indexed_entries("b").hashes) == {"e1", "e2"}
    # A loader that gives no text hashes vouches every row is current.
    assert index.indexed_entries("b").current("e1", "any hash")
    assert not index.indexed_entries("b").current("e3", "any hash")
    assert not index.indexed_entries("empty").hashes
    assert index.cached_books == ["b"]


class _EditableBook:
    """A loader over one book whose entry e1 can be re-embedded from a new text."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rows = _unit(rng, 2)
        self.hashes = ["h1-old", "h2"]
        self.loads = 0
        self.fail = False
        self.release = threading.Event()
        self.release.set()

    def __call__(self, book_id: str) -> BookVectorsWithHashes:
        self.release.wait(10)
        self.loads += 1
        if self.fail:
            raise RuntimeError("database went away")
        return BookVectorsWithHashes(["e1", "e2"], self.rows.copy(), list(self.hashes))

    def edit_e1(self, rng: np.random.Generator) -> None:
        self.rows[0] = _unit(rng, 1)[0]
        self.hashes[0] = "h1-new"


def test_an_edited_entry_is_not_current_in_a_build_from_before_the_edit() -> None:
    """DESIGN §2 rule 6: vectors of an earlier text of an entry are never used. The build
    records each entry's text hash, so a turn can tell an entry edited since."""
    rng = np.random.default_rng(4)
    book = _EditableBook(rng)
    index = FaissIndex(book)
    assert index.indexed_entries("b").current("e1", "h1-old")
    book.edit_e1(rng)
    # Before anyone invalidates, the cached build still holds e1's old vectors: not current.
    assert not index.indexed_entries("b").current("e1", "h1-new")
    assert index.indexed_entries("b").current("e2", "h2")
    index.invalidate("b")  # foreground mode: dropped, the next call rebuilds
    assert index.indexed_entries("b").current("e1", "h1-new")
    assert book.loads == 2


def test_background_mode_serves_the_previous_build_until_the_new_one_is_ready() -> None:
    rng = np.random.default_rng(5)
    book = _EditableBook(rng)
    index = FaissIndex(book, background=True)
    query = book.rows[:1].copy()
    first = index.indexed_entries("b")
    assert [h.entry_id for h in index.search(["b"], query, 1)] == ["e1"]
    book.release.clear()  # hold the refresh's load
    book.edit_e1(rng)
    index.invalidate("b")
    # No search waits for the load: the previous build answers, and its flags say e1's
    # vectors are of an older text.
    served = index.indexed_entries("b")
    assert served.build == first.build
    assert not served.current("e1", "h1-new")
    assert [h.entry_id for h in index.search(["b"], query, 1)] == ["e1"]
    book.release.set()
    assert index.wait_idle(10)
    fresh = index.indexed_entries("b")
    assert fresh.build != first.build
    assert fresh.current("e1", "h1-new")
    assert book.loads == 2
    new_query = book.rows[:1].copy()
    assert index.search(["b"], new_query, 2) == FaissIndex(book).search(["b"], new_query, 2)


def test_a_failed_background_refresh_drops_the_build_and_the_next_search_reports_it() -> None:
    rng = np.random.default_rng(6)
    book = _EditableBook(rng)
    index = FaissIndex(book, background=True)
    index.indexed_entries("b")
    book.fail = True
    index.invalidate("b")
    assert index.wait_idle(10)
    assert index.cached_books == []
    with pytest.raises(IndexUnavailable, match="database went away"):
        index.search(["b"], book.rows[:1], 1)


def test_an_invalidated_book_that_is_not_cached_is_built_by_its_next_search() -> None:
    rng = np.random.default_rng(7)
    book = _EditableBook(rng)
    index = FaissIndex(book, background=True)
    index.invalidate("b")
    assert index.wait_idle(10)
    assert book.loads == 0
    assert index.indexed_entries("b").current("e2", "h2")
