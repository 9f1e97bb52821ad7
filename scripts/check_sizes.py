"""The size gate (docs/design/code-quality.md): no module over 400 lines, no function over 60
(package, workers, benchmarks). Run by scripts/lint; prints every offender and exits 1 when there
is one."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
ROOTS = ("worldbook", "workers", "benchmarks")


def offenders(root: Path) -> list[str]:
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.count("\n")
        if lines > MAX_MODULE_LINES:
            found.append(f"{path}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(source, filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(
                        f"{path}:{node.lineno} {node.name}: {length} lines "
                        f"(at most {MAX_FUNCTION_LINES})"
                    )
    return found


def main() -> int:
    repo = Path(__file__).resolve().parents[1]
    found = [line for root in ROOTS for line in offenders(repo / root)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
