"""Classic keys: plain keys in their matching forms, and regex keys (classic.md §1 rules 5–10).

Plain keys are compared on normalised text (NFKC, apostrophes folded, whitespace runs collapsed;
casefolded unless case-sensitive — rule 6). With whole words on, a key edge written in a spaced
script (W) must not touch another word character, an edge that is punctuation/symbol (P) must
not touch a word character either (``#hello`` matches between spaces, not in ``x#hello``), and
an edge in a script without spaces (U) matches as a substring (rules 8–9). W edges are enforced
by the automaton itself through :func:`worldbook.core.matching.spaced_form` (every class change
is a space, so ``" feu "`` is not in ``" la feuille "``); P edges are left open in the automaton
and verified on the normalised text, which only keys with a P edge ever need.

A key ``/pattern/flags`` (flags ⊂ ``gimsuy``) is a regex tested on each raw message (rule 10),
compiled with the ``regex`` module, whose syntax is closer to JavaScript's (``(?<name>…)``,
variable-length look-behind) than ``re``'s. Flags: ``i``/``m``/``s`` as in JavaScript, ``g`` and
``u`` change nothing for a test, ``y`` anchors at the start. ``\\w`` / ``\\b`` are Unicode-aware
(JavaScript's are ASCII-only; see docs/decisions.md). An invalid regex is no
match, never an exception. Catastrophic backtracking is bounded twice: a pattern that nests
unbounded quantifiers (``(a+)+``, ``(\\w*\\s?)*``) is refused when compiled, and every search
runs under a time limit (:data:`REGEX_SEARCH_TIMEOUT_S`) inside a per-turn time budget.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import regex

from worldbook.core.matching import char_class, normalize, normalize_keep_case, spaced_form

REGEX_SEARCH_TIMEOUT_S = 0.02  # one regex key on one message
REGEX_TURN_BUDGET_S = 0.2  # every regex search of one turn together
_NESTING_LIMIT = 10  # a {n,m} quantifier with m above this counts as unbounded when nested

_SHAPE = re.compile(r"/([\s\S]+?)/([gimsuy]*)")  # SillyTavern parseRegexFromString


def variant_of(case_sensitive: bool, whole_words: bool) -> int:
    """The four plain-key matching variants, one automaton each."""
    return (2 if case_sensitive else 0) + (1 if whole_words else 0)


def variant_options(variant: int) -> tuple[bool, bool]:
    """``(case_sensitive, whole_words)`` of a variant."""
    return variant >= 2, bool(variant & 1)


def normalized(text: str, case_sensitive: bool) -> str:
    return normalize_keep_case(text) if case_sensitive else normalize(text)


@dataclass(frozen=True, slots=True)
class PlainForm:
    """A plain key as loaded in its variant's automaton, and the edges to verify on a hit."""

    form: str
    norm: str
    check_left: bool
    check_right: bool

    @property
    def needs_check(self) -> bool:
        return self.check_left or self.check_right


@lru_cache(maxsize=1 << 17)
def plain_form(key: str, variant: int) -> PlainForm | None:
    """The automaton form of ``key``; None when nothing is left after normalising. Memoised
    (bounded): after an edit the book is compiled again with nearly the same keys."""
    case_sensitive, whole_words = variant_options(variant)
    norm = normalized(key, case_sensitive)
    if not norm:
        return None
    if not whole_words:
        return PlainForm(norm, norm, False, False)
    core = spaced_form(norm)[1:-1]
    left, right = char_class(core[0]), char_class(core[-1])
    form = ("" if left != "W" else " ") + core + ("" if right != "W" else " ")
    return PlainForm(form, norm, left == "P", right == "P")


def edges_ok(norm_text: str, key: PlainForm) -> bool:
    """Whether ``key`` occurs in ``norm_text`` with no word character against a P edge."""
    size = len(key.norm)
    start = norm_text.find(key.norm)
    while start != -1:
        end = start + size
        left_ok = not key.check_left or start == 0 or char_class(norm_text[start - 1]) != "W"
        right_ok = not key.check_right or end == len(norm_text) or char_class(norm_text[end]) != "W"
        if left_ok and right_ok:
            return True
        start = norm_text.find(key.norm, start + 1)
    return False


@dataclass(frozen=True, slots=True)
class RegexKey:
    """A compiled regex key; ``pattern`` None when it cannot be used (``problem`` says why)."""

    source: str
    pattern: Any  # regex.Pattern[str] (the regex module ships no type information)
    anchored: bool
    problem: str | None


def regex_shape(key: str) -> tuple[str, str] | None:
    """``(pattern, flags)`` when ``key`` has the ``/pattern/flags`` shape (rule 10)."""
    found = _SHAPE.fullmatch(key)
    return (found.group(1), found.group(2)) if found else None


def compile_regex(key: str, pattern: str, flags: str) -> RegexKey:
    """A JavaScript-style regex key, or one with a ``problem`` (invalid, unsafe)."""
    if len(set(flags)) != len(flags):
        return RegexKey(key, None, False, f"regex key {key!r} repeats a flag")
    unsafe = nested_quantifier(pattern)
    if unsafe:
        return RegexKey(key, None, False, f"regex key {key!r} refused: {unsafe}")
    options = regex.V0
    options |= regex.IGNORECASE if "i" in flags else 0
    options |= regex.MULTILINE if "m" in flags else 0
    options |= regex.DOTALL if "s" in flags else 0
    try:
        compiled = regex.compile(pattern, options)
    except (regex.error, ValueError, OverflowError, RecursionError) as error:
        return RegexKey(key, None, False, f"regex key {key!r} is invalid: {error}")
    return RegexKey(key, compiled, "y" in flags, None)


def nested_quantifier(pattern: str) -> str | None:
    """Why ``pattern`` risks catastrophic backtracking (an unbounded quantifier applied to a
    group that already contains one), or None. A cheap scan, not a parser: it skips escapes and
    character classes and tracks groups; alternation overlaps are left to the time limit."""
    stack: list[bool] = [False]  # per open group: contains an unbounded quantifier
    i, size = 0, len(pattern)
    last_group: bool | None = None  # the atom just closed was a group containing one
    while i < size:
        char = pattern[i]
        if char == "\\":
            i, last_group = i + 2, None
            continue
        if char == "[":
            i, last_group = _skip_class(pattern, i), None
            continue
        if char == "(":
            stack.append(False)
            i, last_group = i + 1, None
            continue
        if char == ")" and len(stack) > 1:
            inner = stack.pop()
            stack[-1] = stack[-1] or inner
            i, last_group = i + 1, inner
            continue
        length, unbounded = _quantifier(pattern, i)
        if length:
            if unbounded and last_group:
                return "an unbounded quantifier repeats a group that has one (like (a+)+)"
            stack[-1] = stack[-1] or unbounded
            i, last_group = i + length, None
            continue
        i, last_group = i + 1, None
    return None


def _skip_class(pattern: str, start: int) -> int:
    """Index just after the character class opening at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


_BRACES = re.compile(r"\{(\d*)(,?)(\d*)\}")


def _quantifier(pattern: str, i: int) -> tuple[int, bool]:
    """(length, unbounded) of the quantifier at ``i`` (lazy/possessive suffix included)."""
    char = pattern[i]
    if char in "*+?":
        length, unbounded = 1, char != "?"
    elif char == "{":
        found = _BRACES.match(pattern, i)
        if not found or not (found.group(1) or found.group(3)):
            return 0, False
        upper = found.group(3)
        if not found.group(2):
            upper = found.group(1)
        length = found.end() - i
        unbounded = not upper or int(upper) > _NESTING_LIMIT
    else:
        return 0, False
    if i + length < len(pattern) and pattern[i + length] in "?+":
        length += 1
    return length, unbounded


class RegexClock:
    """The per-turn time budget of regex searches; a key that times out is dropped for the
    rest of the turn (reported in the result's notes)."""

    __slots__ = ("left", "timed_out")

    def __init__(self, budget_s: float = REGEX_TURN_BUDGET_S) -> None:
        self.left = budget_s
        self.timed_out: dict[str, str] = {}  # key source -> note

    def search(self, key: RegexKey, text: str) -> bool:
        if key.pattern is None or key.source in self.timed_out:
            return False
        if self.left <= 0:
            self.timed_out[key.source] = f"regex key {key.source!r} skipped: turn time budget spent"
            return False
        started = time.perf_counter()
        try:
            timeout = min(REGEX_SEARCH_TIMEOUT_S, self.left)
            if key.anchored:
                return key.pattern.match(text, timeout=timeout) is not None
            return key.pattern.search(text, timeout=timeout) is not None
        except TimeoutError:
            self.timed_out[key.source] = f"regex key {key.source!r} timed out; treated as no match"
            return False
        finally:
            self.left -= time.perf_counter() - started
