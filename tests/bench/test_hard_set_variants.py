"""``bench_hard_set.py --variant NAME:key=value,...`` gives each setting the type it has: an
integer stays an integer (a count is sliced with it), ``true``/``false`` are booleans and
``none`` is unset."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_hard_set.py"


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_hard_set_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_value_keeps_its_type(script: ModuleType) -> None:
    name, overrides = script._variant(
        "mixed:index_reserve_lines=2,diversity=0.25,glosses=true,language_correction=False,"
        "aligned_cross_weight=none,offset=-3"
    )
    assert name == "mixed"
    assert overrides == {
        "index_reserve_lines": 2,
        "diversity": 0.25,
        "glosses": True,
        "language_correction": False,
        "aligned_cross_weight": None,
        "offset": -3,
    }
    assert type(overrides["index_reserve_lines"]) is int
    assert type(overrides["glosses"]) is bool


def test_a_word_that_is_no_value_is_refused(script: ModuleType) -> None:
    with pytest.raises(ValueError):
        script._variant("bad:diversity=lots")
