"""Where the shared sample files are: ``<repo>/../shared/samples``, or ``$SHARED_SAMPLES_DIR``
(a git worktree lives elsewhere; the samples are never copied into the repository)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SAMPLES_ROOT = Path(
    os.environ.get("SHARED_SAMPLES_DIR")
    or Path(__file__).resolve().parents[1] / ".." / "shared" / "samples"
)


def sample_path(*parts: str) -> Path:
    """A sample file below ``SAMPLES_ROOT``; the calling test is skipped when it is absent."""
    path = SAMPLES_ROOT.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/samples is not checked out here)")
    return path
