"""Adapters: the I/O behind the ports (store, index, embedders, tokenizers, formats)."""
