"""Turn the ``WORLDBOOK_EMBEDDER`` setting into an :class:`~worldbook.ports.Embedder`.

Constructing an embedder is cheap: models load on first use. The accepted specs are listed
from :data:`EMBEDDERS` so the error message can never drift from what is accepted.
"""

from __future__ import annotations

from collections.abc import Callable

from worldbook.adapters.embedders.e5 import E5Embedder
from worldbook.adapters.embedders.st import SentenceTransformerEmbedder
from worldbook.adapters.embedders.use import UseEmbedder
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder
from worldbook.testing import HashingEmbedder

ST_PREFIX = "sentence-transformers:"

Factory = Callable[[str, int, str], Embedder]
"""``factory(argument, threads, device)``; ``argument`` is what follows the prefix, if any."""


def _e5(_: str, threads: int, __: str) -> Embedder:
    return E5Embedder(threads=threads)


def _use(_: str, threads: int, __: str) -> Embedder:
    return UseEmbedder(threads=threads)


def _st(name_or_path: str, threads: int, device: str) -> Embedder:
    return SentenceTransformerEmbedder(name_or_path, threads=threads, device=device)


def _fake(_: str, __: int, ___: str) -> Embedder:
    return HashingEmbedder()


EMBEDDERS: dict[str, Factory] = {
    "e5-small": _e5,
    "use-m3": _use,
    ST_PREFIX: _st,
    "fake": _fake,
}
"""Spec (or spec prefix, ending in ``:``) → factory. ``fake`` is the test double."""


def accepted_specs() -> list[str]:
    """Human-readable accepted values, e.g. ``sentence-transformers:<name-or-path>``."""
    return [f"{spec}<name-or-path>" if spec.endswith(":") else spec for spec in EMBEDDERS]


def load_embedder(spec: str, *, threads: int = 0, device: str = "cpu") -> Embedder:
    """The embedder named by ``spec`` (e.g. ``e5-small``); its model loads on first use.

    Raises:
        InvalidInput: unknown spec (the message lists the accepted ones).
        IndexUnavailable: the package or model behind a known spec is missing.
    """
    spec = spec.strip()
    for key, factory in EMBEDDERS.items():
        if key.endswith(":") and spec.startswith(key):
            return factory(spec[len(key) :], threads, device)
        if spec == key:
            return factory("", threads, device)
    raise InvalidInput(
        f"unknown embedder {spec!r}; accepted: {', '.join(accepted_specs())}.",
        field="embedder",
    )
