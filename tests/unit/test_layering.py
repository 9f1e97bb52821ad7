"""The allowed arrows between worldbook's layers, checked on every import (ADR 0019).

``core <- ports <- adapters <- service <- api / cli / workers``: a module may import its own
layer and the layers below it, never one above. Every import counts, at the top of a module or
inside a function, and under ``TYPE_CHECKING`` too: an arrow drawn lazily is still an arrow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("worldbook", "workers")

BASE = frozenset({"errors"})
PURE = BASE | {"core"}
PLAIN = PURE | {"ports", "llm_port", "runtime", "settings"}
WIRED = PLAIN | {"adapters", "service"}

ALLOWED: dict[str, frozenset[str]] = {
    # the error hierarchy, below everything
    "errors": frozenset(),
    # the pure rules: no I/O, no threads, no settings
    "core": BASE,
    # the Protocols the service talks to (and the pass-through embedder base)
    "ports": PURE,
    "llm_port": PURE,
    # threads and caches, the one home of both
    "runtime": PURE,
    # the typed settings, built at entry points only
    "settings": PURE,
    # SQL, FAISS, models, brokers, file formats behind the ports
    "adapters": PLAIN,
    # use cases and the composition root
    "service": PLAIN | {"adapters"},
    # the entry points
    "api": WIRED,
    "workers": WIRED,
    "cli": WIRED | {"bench", "workers"},  # `worldbook bench`, `worldbook worker`
    # benchmark runs, a use of the product the CLI offers (`worldbook bench`)
    "bench": WIRED,
    # in-memory fakes and their wiring: imported by tests, scripts and benchmarks only
    "testing": WIRED,
    # `worldbook/__init__.py`: the public names, resolved lazily from their homes
    "<public>": WIRED,
}


def layer_of(module: str) -> str:
    """``worldbook.core.types`` -> ``core``; ``workers.tasks`` -> ``workers``."""
    parts = module.split(".")
    if parts[0] == "workers":
        return "workers"
    return parts[1] if len(parts) > 1 else "<public>"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> Iterator[tuple[int, str]]:
    """Every worldbook/workers module ``path`` imports, with its line; ``from worldbook import
    errors`` names the module ``worldbook.errors``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names, line = [alias.name for alias in node.names], node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names]
            names, line = [s for s in subs if _is_module(s)] or [node.module], node.lineno
        for name in names:
            if name.split(".")[0] in PACKAGES:
                yield line, name


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (REPO / package).rglob("*.py"))


def arrows() -> list[tuple[str, str, str]]:
    """(``path:line``, importer, imported) for every import between two layers."""
    found = []
    for path in _sources():
        importer = _module_name(path)
        for line, imported in imports_of(path):
            if layer_of(importer) != layer_of(imported):
                found.append((f"{path.relative_to(REPO)}:{line}", importer, imported))
    return found


def test_every_arrow_points_down() -> None:
    wrong = [
        f"{where}: {importer} -> {imported}"
        for where, importer, imported in arrows()
        if layer_of(imported) not in ALLOWED[layer_of(importer)]
    ]
    assert wrong == []


def test_every_layer_is_named() -> None:
    layers = {layer_of(_module_name(p)) for p in _sources()}
    assert layers <= set(ALLOWED), layers - set(ALLOWED)
    # the table is acyclic: a layer allowed to import another is never imported back
    for layer, below in ALLOWED.items():
        assert all(layer not in ALLOWED[b] for b in below), layer


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def f():\n    from worldbook.service.components import Components\n"
        "from worldbook import errors\n",
        encoding="utf-8",
    )
    found = {name: line for line, name in imports_of(bad)}
    assert found == {"worldbook.service.components": 2, "worldbook.errors": 3}
    assert "service" not in ALLOWED["core"]


THREADS = ("threading", "concurrent", "multiprocessing", "queue", "asyncio")


@pytest.mark.parametrize("layer", ["core", "ports"])
def test_no_threads_in_the_pure_layers(layer: str) -> None:
    """Threads and the locks that guard shared state live in ``worldbook/runtime`` (its
    docstring is the threading model) and above; the core and the ports start and lock none."""
    offenders = []
    for path in sorted((REPO / "worldbook" / layer).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in THREADS]
    assert offenders == []


def test_testing_and_bench_stay_out_of_the_product_path() -> None:
    """The fakes are imported by tests only; the benchmarks by ``worldbook bench`` only."""
    wrong = [
        f"{where}: {importer} -> {imported}"
        for where, importer, imported in arrows()
        if layer_of(imported) == "testing"
        or (layer_of(imported) == "bench" and importer != "worldbook.cli.bench")
    ]
    assert wrong == []
