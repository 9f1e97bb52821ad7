"""Tokenizer adapters behind :class:`worldbook.ports.Tokenizer`.

``get_tokenizer(id)`` is the entry point; see :mod:`.registry` for accepted ids and the
family modules for what each counts.
"""

from worldbook.adapters.tokenizers.estimate import EstimateTokenizer
from worldbook.adapters.tokenizers.huggingface import HuggingFaceTokenizer
from worldbook.adapters.tokenizers.registry import (
    accepted_tokenizer_forms,
    canonical_tokenizer_id,
    clear_tokenizer_cache,
    get_tokenizer,
)
from worldbook.adapters.tokenizers.tiktoken_bpe import TiktokenTokenizer

__all__ = [
    "EstimateTokenizer",
    "HuggingFaceTokenizer",
    "TiktokenTokenizer",
    "accepted_tokenizer_forms",
    "canonical_tokenizer_id",
    "clear_tokenizer_cache",
    "get_tokenizer",
]
