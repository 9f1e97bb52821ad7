"""Tokenizer ids -> loaded tokenizers, with a small LRU so each file is read once.

Accepted ids come from the families below; the error for an unknown id lists their forms, so
adding a family here is the only change needed for both loading and the message.

:class:`TokenizerRegistry` is the ``TokenizerSource`` port for a process: requests may name
tiktoken encodings, the estimate and ``hf:<name>`` for the tokenizer.json files the operator
listed in ``WORLDBOOK_HF_TOKENIZERS`` — never a file path (a path in a request made the server
open any file it could read, ADR 0010). Only trusted callers (the operator's CLI and the
settings' own default) may use ``hf:<path>``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
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


class TokenizerRegistry:
    """The tokenizers one process may use (the ``TokenizerSource`` port).

    Args:
        default: the settings' default tokenizer id (trusted: it may be ``hf:<path>``).
        tiktoken_dir: where extra ``<encoding>.tiktoken`` files live.
        named_files: ``name -> tokenizer.json path`` from settings; requests say ``hf:<name>``.
        allow_paths: accept ``hf:<path>`` from callers (the operator's CLI only).
    """

    def __init__(
        self,
        *,
        default: str,
        tiktoken_dir: Path | None = None,
        named_files: Mapping[str, Path] | None = None,
        allow_paths: bool = False,
    ) -> None:
        self._dir = Path(tiktoken_dir).expanduser().resolve() if tiktoken_dir else None
        self._named = {name: Path(path) for name, path in (named_files or {}).items()}
        self._allow_paths = allow_paths
        self._default_spec = default
        self._loaded: dict[str, Tokenizer] = {}
        self._lock = threading.Lock()
        self.default_id = self._canonical(default, trusted=True)

    def canonical_id(self, tokenizer_id: str | None) -> str:
        if tokenizer_id is None or tokenizer_id.strip() == self._default_spec.strip():
            return self.default_id
        return self._canonical(tokenizer_id, trusted=self._allow_paths)

    def get(self, tokenizer_id: str | None) -> Tokenizer:
        canonical_id = self.canonical_id(tokenizer_id)
        with self._lock:
            found = self._loaded.get(canonical_id)
        if found is not None:
            return found
        # Loaded outside the lock: a large file must not stall turns that use another
        # tokenizer (a 434 MB file once stalled every turn, ADR 0010).
        loaded = self._load(canonical_id)
        with self._lock:
            return self._loaded.setdefault(canonical_id, loaded)

    def _canonical(self, tokenizer_id: str, *, trusted: bool) -> str:
        spec = tokenizer_id.strip()
        if spec.startswith(huggingface.PREFIX):
            name = spec[len(huggingface.PREFIX) :].strip()
            if name in self._named:
                return f"{huggingface.PREFIX}{name}"
            if not trusted:
                raise InvalidInput(self._not_allowed(tokenizer_id), field="tokenizer")
        return canonical_tokenizer_id(spec)

    def _not_allowed(self, tokenizer_id: str) -> str:
        named = ", ".join(f"hf:{n}" for n in sorted(self._named)) or "none configured"
        return (
            f"Tokenizer {tokenizer_id[:120]!r} is not one this service offers. Name a tiktoken "
            f"encoding ({', '.join(tiktoken_bpe.encoding_names())}), {estimate.FORM}, or a "
            f"tokenizer the operator configured in WORLDBOOK_HF_TOKENIZERS ({named})."
        )

    def _load(self, canonical_id: str) -> Tokenizer:
        if canonical_id.startswith(huggingface.PREFIX):
            name = canonical_id[len(huggingface.PREFIX) :]
            if name in self._named:
                return huggingface.load_named(name, self._named[name])
        return _load(canonical_id, self._dir)
