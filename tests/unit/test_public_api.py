"""The public API is what ``worldbook/__init__.py`` re-exports, in a sorted ``__all__``."""

from __future__ import annotations

import subprocess
import sys

import worldbook

HEAVY = ("sqlalchemy", "faiss", "torch", "httpx", "fastapi", "starlette", "celery", "redis")


def _loaded_after(statement: str, watched: tuple[str, ...] = HEAVY) -> list[str]:
    """Which of the ``watched`` modules a fresh interpreter has loaded after ``statement``."""
    code = f"import sys; {statement}; print(','.join(m for m in {watched!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [m for m in out.stdout.strip().split(",") if m]


def test_all_is_sorted_and_importable() -> None:
    assert worldbook.__all__ == sorted(worldbook.__all__)
    for name in worldbook.__all__:
        assert getattr(worldbook, name) is not None


def test_importing_the_library_starts_nothing_heavy() -> None:
    # Settings are built at entry points and models load on first use: importing the package
    # must not import celery or torch, nor read the environment into a settings object.
    assert _loaded_after("import worldbook", ("celery", "torch", "sentence_transformers")) == []


def test_importing_worldbook_does_not_import_celery() -> None:
    # The queue adapter imports celery only when a Celery queue is made.
    statement = (
        "import worldbook, worldbook.adapters.queues, worldbook.service.indexing, "
        "worldbook.service.components"
    )
    assert _loaded_after(statement, ("celery",)) == []


def test_the_pure_core_loads_no_sql_faiss_torch_or_http() -> None:
    # docs/design/code-quality.md: every core module, imported alone, stays light.
    import pkgutil

    import worldbook.core

    modules = [m.name for m in pkgutil.walk_packages(worldbook.core.__path__, "worldbook.core.")]
    assert len(modules) > 10
    statement = "; ".join(f"import {name}" for name in modules)
    assert _loaded_after(statement) == []


def test_importing_worldbook_is_lazy() -> None:
    assert _loaded_after("import worldbook") == []
    # Names resolve on first use, from their home module.
    assert _loaded_after("from worldbook import select, Message, SelectionRules") == []
