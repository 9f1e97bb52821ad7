"""The public API is what ``worldbook/__init__.py`` re-exports, in a sorted ``__all__``."""

from __future__ import annotations

import subprocess
import sys

import worldbook


def test_all_is_sorted_and_importable() -> None:
    assert worldbook.__all__ == sorted(worldbook.__all__)
    for name in worldbook.__all__:
        assert getattr(worldbook, name) is not None


def test_importing_the_library_starts_nothing_heavy() -> None:
    # Settings are built at entry points and models load on first use: importing the package
    # must not import celery or torch, nor read the environment into a settings object.
    code = (
        "import sys, worldbook; "
        "print(any(m in sys.modules for m in ('celery', 'torch', 'sentence_transformers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
