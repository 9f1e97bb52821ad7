"""Tokenizer ids -> loaded tokenizers, with a small LRU so each file is read once.

Accepted ids come from the families below; the error for an unknown id lists their forms, so
adding a family here is the only change needed for both loading and the message.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worldbook.adapters.tokenizers import estimate, huggingface, tiktoken_bpe
from worldbook.errors import InvalidInput
from worldbook.ports import Tokenizer

LOADED_TOKENIZERS_MAX = 8
"""Loaded tokenizers kept in memory (a tiktoken encoding is ~20 MB, a tokenizer.json ~1-30 MB)."""


@dataclass(frozen=True, slots=True)
class _Family:
    form: str
    canonical: Callable[[str], str | None]  # the canonical id, or None if not this family
    load: Callable[[str, Path | None], Tokenizer]  # canonical id, tiktoken_dir


_FAMILIES: tuple[_Family, ...] = (
    _Family(
        form=tiktoken_bpe.FORM,
        canonical=tiktoken_bpe.canonical,
        load=lambda cid, directory: tiktoken_bpe.load(
            cid.removeprefix(tiktoken_bpe.PREFIX), directory
        ),
    ),
    _Family(
        form=huggingface.FORM,
        canonical=huggingface.canonical,
        load=lambda cid, _directory: huggingface.load(cid),
    ),
    _Family(
        form=estimate.FORM,
        canonical=estimate.canonical,
        load=lambda cid, _directory: estimate.load(cid),
    ),
)


def accepted_tokenizer_forms() -> list[str]:
    """Human-readable forms of every accepted tokenizer id (for errors, docs and ``--help``)."""
    forms = [family.form for family in _FAMILIES]
    forms.append(f"tiktoken encodings: {', '.join(tiktoken_bpe.encoding_names())}")
    return forms


def _resolve(tokenizer_id: str) -> tuple[_Family, str]:
    spec = tokenizer_id.strip()
    for family in _FAMILIES:
        canonical_id = family.canonical(spec)
        if canonical_id is not None:
            return family, canonical_id
    raise InvalidInput(
        f"Unknown tokenizer {tokenizer_id!r}; accepted: {'; '.join(accepted_tokenizer_forms())}.",
        field="tokenizer",
    )


def canonical_tokenizer_id(tokenizer_id: str) -> str:
    """The id a loaded tokenizer reports (``cl100k_base`` -> ``tiktoken:cl100k_base``)."""
    return _resolve(tokenizer_id)[1]


@functools.lru_cache(maxsize=LOADED_TOKENIZERS_MAX)
def _load(canonical_id: str, tiktoken_dir: Path | None) -> Tokenizer:
    family, _ = _resolve(canonical_id)
    return family.load(canonical_id, tiktoken_dir)


def get_tokenizer(tokenizer_id: str, *, tiktoken_dir: str | Path | None = None) -> Tokenizer:
    """The tokenizer named by ``tokenizer_id``, loaded once and then served from an LRU.

    Args:
        tokenizer_id: ``tiktoken:<encoding>`` (or the bare encoding name), ``hf:<path>``,
            ``estimate`` or ``estimate:chars-per-token=<n>``.
        tiktoken_dir: where ``<encoding>.tiktoken`` files live for encodings other than the
            bundled ``cl100k_base`` (settings: ``WORLDBOOK_TIKTOKEN_DIR``).

    Raises:
        InvalidInput: unknown id (the message lists the accepted forms), or a missing or
            corrupt tokenizer file (the message says which file and what to do).
    """
    directory = Path(tiktoken_dir).expanduser().resolve() if tiktoken_dir is not None else None
    _, canonical_id = _resolve(tokenizer_id)
    return _load(canonical_id, directory)


def clear_tokenizer_cache() -> None:
    """Forget every loaded tokenizer (tests; after replacing a file)."""
    _load.cache_clear()
