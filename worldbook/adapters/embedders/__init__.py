"""Embedding models behind the :class:`worldbook.ports.Embedder` port (see ``registry``)."""

from worldbook.adapters.embedders.registry import accepted_specs, load_embedder

__all__ = ["accepted_specs", "load_embedder"]
