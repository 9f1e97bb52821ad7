"""Build the language basis a model ships with (ADR 0003): the top principal directions of
the per-language mean vectors of the parallel neutral corpus, as package data.

    PYTHONPATH=. OMP_NUM_THREADS=1 .venv/bin/python benchmarks/build_language_basis.py \
        [--embedder e5-small] [--rank 12]

Writes ``worldbook/adapters/language_basis/<model family>.npz``. The corpus is
``worldbook/bench/language_corpus/`` (written for the project; nothing from XQuAD or XQuAD-R).
The rank (12 of the 15 directions 16 languages span) is the one measured in
``docs/decisions.md``. Vectors are memoised in ``benchmarks/.cache``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from worldbook.adapters.embedders import load_embedder
from worldbook.adapters.language_correction import basis_path, save_language_basis
from worldbook.bench.common import CachedEmbedder
from worldbook.bench.language_agnostic import LanguageSubspace, corpus_digest

CACHE = Path(__file__).resolve().parent / ".cache"  # vectors kept between runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="e5-small")
    parser.add_argument("--rank", type=int, default=12)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    inner = load_embedder(args.embedder, threads=args.threads)
    embedder = CachedEmbedder(inner, CACHE)
    subspace = LanguageSubspace.from_corpus(embedder, rank=args.rank)
    path = basis_path(inner.model_id)
    save_language_basis(
        path, subspace.basis, corpus_digest=corpus_digest(), model_id=inner.model_id
    )
    values = ", ".join(f"{v:.3f}" for v in subspace.singular_values)
    print(f"wrote {path}: rank {args.rank}, singular values {values}")


if __name__ == "__main__":
    main()
