"""Comments and docstrings cite the rule they implement — a DESIGN section, an ADR, a design
page — never an issue number, which points outside the repository (ADR 0019).

Only comments and docstrings are read: a results label naming an issue is data that runs are
compared on over time, not a citation.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("worldbook", "workers", "tests", "benchmarks", "scripts")

ISSUE = re.compile(r"\bissues?[\s-]*(?:no\.?\s*)?#?\d+|(?<![\w&/#])#\d{1,4}\b", re.IGNORECASE)
NOT_AN_ISSUE = re.compile(r"UAX #\d+")  # Unicode Standard Annexes are numbered too


def citations(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every issue-number citation in the comments and docstrings of
    ``source``."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield from _found(token.start[0], token.string)
    for node in ast.walk(ast.parse(source)):
        # a bare string statement: a module, class or function docstring, or an attribute's
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield from _found(node.lineno, node.value.value)


def _found(line: int, text: str) -> Iterator[tuple[int, str]]:
    cleaned = NOT_AN_ISSUE.sub("", text)
    for match in ISSUE.finditer(cleaned):
        yield line + cleaned[: match.start()].count("\n"), match.group(0)


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (REPO / folder).rglob("*.py"))


def test_no_comment_or_docstring_cites_an_issue() -> None:
    found = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for path in _sources()
        for line, text in citations(path.read_text(encoding="utf-8"))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('"""Rules (issue 12 item 2)."""\n', [(1, "issue 12")]),
        ("x = 1  # see #42\n", [(1, "#42")]),
        ('def f():\n    """Line one.\n\n    Issue 16: why."""\n', [(4, "Issue 16")]),
        ('"""Wide characters (UAX #11), ADR 0013, DESIGN §6."""\n', []),
        ('LABEL = "before issue 16"  # a results key, not a citation\n', []),
        ('COLOUR = "#123"\n', []),
        ('LABEL = 1\n"""Attribute docstring (issue 3)."""\n', [(2, "issue 3")]),
    ],
)
def test_the_check_finds_issue_citations_only(source: str, expected: list[tuple[int, str]]) -> None:
    assert list(citations(source)) == expected
