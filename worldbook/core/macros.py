"""Macros in lore: ``{{char}}``, ``{{user}}`` and the SillyTavern macros that make sense for lore
(ADR 0012), substituted when a turn renders lore — never in what is stored or exported.

Read from SillyTavern's macro documentation (docs.sillytavern.app, "Macros"): names are
case-insensitive and spaces inside the braces are allowed (``{{ User }}``); the legacy tags
``<USER>``, ``<BOT>`` and ``<CHAR>`` mean the user and the character. Handled here:

- ``{{char}}`` / ``<BOT>`` / ``<CHAR>``: the name of the character whose book the entry came from;
  ``{{user}}`` / ``<USER>``: the user's name. Without a name the macro is left as written and
  the caller is told (``Substituted.missing``), so the trace can say so.
- ``{{random::a::b}}`` / ``{{random:a,b}}`` and ``{{pick::a::b}}`` / ``{{pick:a,b}}``: one option,
  drawn stably per chat — a hash of the chat, the text's own key and the macro's place in it —
  so the same chat always reads the same lore and its stable prompt prefix stays byte-identical
  (SillyTavern rerolls ``random`` on every generation; that would break prompt caching and
  DESIGN §2 rule 10, "the same input gives the same selection").
- ``{{newline}}`` → a line break, ``{{noop}}`` → nothing, ``{{// comment}}`` → removed (an
  author's note, never meant for the model).
- Everything else — ``{{time}}``, ``{{date}}``, ``{{weekday}}`` included — is left as written:
  a clock in lore would change the stable prefix every minute and make two identical turns
  differ (docs/decisions.md).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_MACRO = re.compile(r"\{\{(.*?)\}\}", re.S)
_LEGACY = re.compile(r"<(USER|BOT|CHAR)>", re.I)
_HINT = re.compile(r"\{\{|<(?:USER|BOT|CHAR)>", re.I)


@dataclass(frozen=True, slots=True)
class MacroNames:
    """What fills the name macros of one book in one turn (None: not known)."""

    char: str | None = None
    user: str | None = None
    chat: str = ""  # the seed of stable draws (the chat id; "" without one)
    # Which of char / user are stand-ins ("User" in a preview without a user name), so the
    # turn can say that a real turn would show the real name.
    stand_ins: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        """A cache key part: different names never share a substituted text or matcher."""
        stand_ins = ",".join(sorted(self.stand_ins))
        return f"{self.char or ''}\x1f{self.user or ''}\x1f{self.chat}\x1f{stand_ins}"


@dataclass(frozen=True, slots=True)
class Substituted:
    """A text with its macros filled; ``missing`` names the macros left for want of a name."""

    text: str
    missing: frozenset[str] = frozenset()
    stood_in: frozenset[str] = frozenset()  # name macros filled with a stand-in name


def has_macros(text: str) -> bool:
    """Whether ``text`` holds anything this module would look at (cheap pre-check)."""
    return _HINT.search(text) is not None


def substitute(text: str, names: MacroNames, key: str = "") -> Substituted:
    """``text`` with its macros filled from ``names``; ``key`` (e.g. entry id and field) keeps
    the stable draws of different texts apart."""
    if not has_macros(text):
        return Substituted(text)
    missing: set[str] = set()
    used: set[str] = set()
    counter = [0]

    def name_of(kind: str, written: str) -> str:
        value = names.user if kind == "user" else names.char
        if value is None:
            missing.add(kind)
            return written
        used.add(kind)
        return value

    def macro(match: re.Match[str]) -> str:
        counter[0] += 1
        body = match.group(1).strip()
        name = _split(body)[0]
        if name in ("char", "user"):
            return name_of(name, match.group(0))
        return _expand(body, names, f"{key}#{counter[0]}", match.group(0))

    def legacy(match: re.Match[str]) -> str:
        return name_of("user" if match.group(1).upper() == "USER" else "char", match.group(0))

    out = _LEGACY.sub(legacy, _MACRO.sub(macro, text))
    return Substituted(out, frozenset(missing), frozenset(used & names.stand_ins))


def _expand(body: str, names: MacroNames, place: str, written: str) -> str:
    """A macro other than the names: a comment, a stable draw, a line break, or as written."""
    if body.startswith("//"):
        return ""
    name, args = _split(body)
    if name in ("random", "pick") and args:
        return _draw(args, names.chat, place)
    if name == "newline":
        return "\n"
    if name == "noop":
        return ""
    return written  # unknown, or one a lore text must not resolve (time, date, …)


def _split(body: str) -> tuple[str, list[str]]:
    """``"random::a::b"`` → ("random", ["a", "b"]); ``"pick: a, b"`` → ("pick", ["a", "b"])."""
    if "::" in body:
        name, *args = body.split("::")
        return name.strip().casefold(), args
    name, colon, rest = body.partition(":")
    if not colon:
        return name.strip().casefold(), []
    return name.strip().casefold(), [a.strip() for a in rest.split(",")]


def _draw(options: list[str], chat: str, place: str) -> str:
    """One option, the same for the same chat, text and place (blake2b, not ``random``: stable
    across processes and Python versions)."""
    digest = hashlib.blake2b(f"{chat}\x1f{place}".encode(), digest_size=8).digest()
    return options[int.from_bytes(digest, "big") % len(options)]
