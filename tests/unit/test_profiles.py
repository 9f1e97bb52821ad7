"""Model profiles: the known-model table and how explicit values override it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from worldbook.adapters.tokenizers import get_tokenizer
from worldbook.core import profiles
from worldbook.core.profiles import KNOWN_PROFILES, known_profile, resolve_profile
from worldbook.core.types import ModelProfile
from worldbook.errors import InvalidInput


@pytest.mark.parametrize(
    ("name", "table_key"),
    [
        ("gpt-4o", "gpt-4o"),
        ("GPT-4o-2024-08-06", "gpt-4o"),
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("gpt-4-turbo-2024-04-09", "gpt-4-turbo"),
        ("gpt-4-0613", "gpt-4"),
        ("gpt-4.1", "gpt-4.1"),
        ("anthropic/claude-3.5-sonnet", "claude-3-5-sonnet"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"),
        ("mistral-7b-instruct-v0.2", "mistral-7b-instruct"),
    ],
)
def test_known_names_match_with_provider_case_and_version_variations(
    name: str, table_key: str
) -> None:
    assert known_profile(name) == KNOWN_PROFILES[table_key]


@pytest.mark.parametrize("name", ["gpt-4omega", "my-local-model", "claude", "", "llama"])
def test_unknown_names_match_nothing(name: str) -> None:
    assert known_profile(name) is None


def test_known_model_values_are_used_when_nothing_is_explicit() -> None:
    profile = resolve_profile(
        "gpt-4", input_window=None, tokenizer=None, supports_tools=None, default_window=4096
    )
    assert profile == ModelProfile(8_192, "tiktoken:cl100k_base", supports_tools=True)


def test_explicit_values_win_over_the_table() -> None:
    profile = resolve_profile(
        "gpt-4o",
        input_window=4000,
        tokenizer="hf:/models/tok.json",
        supports_tools=False,
        default_window=8192,
    )
    assert profile == ModelProfile(4000, "hf:/models/tok.json", supports_tools=False)


def test_unknown_or_absent_model_gets_the_defaults() -> None:
    for model in (None, "", "my-local-model"):
        profile = resolve_profile(
            model, input_window=None, tokenizer=None, supports_tools=None, default_window=8192
        )
        assert profile == ModelProfile(8192, "tiktoken:cl100k_base", supports_tools=False)
    custom = resolve_profile(
        None,
        input_window=None,
        tokenizer=None,
        supports_tools=True,
        default_window=2048,
        default_tokenizer="estimate",
    )
    assert custom == ModelProfile(2048, "estimate", supports_tools=True)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"input_window": 0}, "input_window"),
        ({"input_window": -5}, "input_window"),
        ({"default_window": 0}, "default_window"),
        ({"tokenizer": "  "}, "tokenizer"),
        ({"default_tokenizer": ""}, "default_tokenizer"),
    ],
)
def test_bad_values_name_their_field(kwargs: dict[str, object], field: str) -> None:
    base: dict[str, object] = {
        "input_window": None,
        "tokenizer": None,
        "supports_tools": None,
        "default_window": 8192,
    }
    with pytest.raises(InvalidInput) as err:
        resolve_profile("gpt-4", **{**base, **kwargs})  # type: ignore[arg-type]
    assert err.value.field == field


def test_every_table_tokenizer_loads_offline() -> None:
    for name, profile in KNOWN_PROFILES.items():
        assert profile.input_window > 0, name
        assert get_tokenizer(profile.tokenizer_id).id == profile.tokenizer_id, name


def test_profiles_module_stays_pure() -> None:
    tree = ast.parse(Path(profiles.__file__).read_text(encoding="utf-8"))
    imported = {
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    allowed = {"__future__", "worldbook.core.types", "worldbook.errors"}
    assert imported <= allowed
