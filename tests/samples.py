"""Where the shared sample files are: ``<repo>/../shared/samples``, or ``$SHARED_SAMPLES_DIR``
(a git worktree lives elsewhere; the samples are never copied into the repository)."""

from __future__ import annotations

import os
from pathlib import Path

SAMPLES_ROOT = Path(
    os.environ.get("SHARED_SAMPLES_DIR")
    or Path(__file__).resolve().parents[1] / ".." / "shared" / "samples"
)
