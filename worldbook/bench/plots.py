"""PNG plots of a bench run (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from worldbook.bench.xquad import LANGUAGES


def write_plots(results: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    written: list[Path] = []
    if results.get("xquad"):
        written.append(_r5_per_language(results["xquad"], out_dir / "xquad_r5.png"))
    latency = results.get("latency")
    if latency:
        written.append(_latency(latency, out_dir / "latency.png"))
        written.append(_throughput(latency, out_dir / "throughput.png"))
    return written


def _r5_per_language(xquad: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt
    import numpy as np

    methods = list(xquad)
    x = np.arange(len(LANGUAGES))
    width = 0.8 / max(1, len(methods))
    fig, ax = plt.subplots(figsize=(12, 4.5))
    for i, method in enumerate(methods):
        values = [xquad[method][lang]["r@5"] for lang in LANGUAGES]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=method)
    ax.axhline(0.88, color="grey", linestyle="--", linewidth=0.8)
    ax.set_xticks(x, LANGUAGES)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("R@5")
    ax.set_title("XQuAD: R@5 per question language (English paragraphs as entries)")
    ax.legend(fontsize=8, ncols=min(6, len(methods)), loc="upper center",
              bbox_to_anchor=(0.5, -0.08))  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _latency(latency: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    data: list[list[float]] = []
    labels: list[str] = []
    for n, book in latency["books"].items():
        samples = book.get("_samples", {})
        for kind in ("selection", "scan"):
            if samples.get(kind):
                data.append(samples[kind])
                labels.append(f"{'select' if kind == 'selection' else 'ST scan'}\n{n}")
        if book.get("_turn_samples"):
            data.append(book["_turn_samples"])
            labels.append(f"turn\n{n}")
    fig, ax = plt.subplots(figsize=(12, 4.5))
    if data:
        ax.boxplot(data, whis=(1, 99), showfliers=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("ms per turn (log)")
    ax.set_title("Latency per turn by book size (entries): selection core, ST-style scan, "
                 "end-to-end turn")  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _throughput(latency: dict[str, Any], path: Path) -> Path:
    import matplotlib.pyplot as plt

    sizes = [int(n) for n in latency["books"]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, label in (
        ("selection_ms", "selection core"),
        ("scan_baseline_ms", "ST-style scan"),
        ("turn_ms", "end-to-end turn"),
    ):
        points = [
            (n, 1000 / b[key]["p50"])
            for n, b in zip(sizes, latency["books"].values(), strict=True)
            if b.get(key) and b[key].get("p50")
        ]
        if points:
            ax.plot(*zip(*points, strict=True), marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("entries in the book (50 aliases each)")
    ax.set_ylabel("turns per second at p50 (log)")
    ax.set_title("Throughput vs book size (one core)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
