"""Split a text into entries, word for word (docs/ai-authoring.md §4 "Split").

The text is cut into *units* — paragraphs (blank-line blocks), with every heading line starting
a new one — and consecutive units are *grouped* into entries, either by a language model's
proposal (titles and unit ranges only) or deterministically: each heading starts an entry; a
text without headings gives one entry per paragraph. Then the DESIGN §6 limits are enforced
without changing a character:

- a part whose lore is under the minimum (20, wide characters counting two) is joined to the
  part before it; a part that is only a heading line is joined to the part after it;
- a part over 20,000 characters is cut into near-equal pieces at the last paragraph break, else
  line break, else sentence end, else space, in the second half of each piece's room; a hard
  cut between two characters only where the text has none of those.

**Exactness.** Each entry's lore starts and ends with a non-whitespace character; the
whitespace between two entries is the first one's ``separator`` (the last entry's separator is
the text's trailing whitespace), and the text's leading whitespace is ``leading``::

    text == split.leading + "".join(part.lore + part.separator for part in split.parts)

Heading lines stay in the lore (word for word); the title is taken from them.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from worldbook.core.entry_titles import (
    SENTENCE_END,
    clean_title,
    opening_title,
    shorten,
    unique_aliases,
    unique_titles,
)
from worldbook.core.limits import LIMITS, Limits, check_split_text, weighted_length
from worldbook.errors import InvalidInput

_LINE = re.compile(r"[^\n]*\n|[^\n]+")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_BOLD = re.compile(r"^\s*(\*\*|__)(.+?)\1\s*:?\s*$")
_FIELD = re.compile(r"^\s*(?:title|name)\s*:\s*(\S.*?)\s*$", re.IGNORECASE)
_UNDERLINE = re.compile(r"^\s*(?:={3,}|-{3,})\s*$")
_PARAGRAPH_BREAK = re.compile(r"\s*\n[^\S\n]*\n\s*")
_LINE_BREAK = re.compile(r"\s*\n\s*")
_SENTENCE = re.compile(r"([.!?…][\"'”’»)\]]*)(\s+)|([。！？][」』”’)]*)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Unit:
    """A paragraph: ``text[start:end]`` (no outer whitespace); ``heading`` is the title its
    first line gives, if that line is a heading; ``body`` is False for a lone heading line."""

    start: int
    end: int
    heading: str | None = None
    body: bool = True


@dataclass(frozen=True, slots=True)
class Group:
    """Units ``first``..``last`` (inclusive, 0-based) as one entry, with an optional title."""

    first: int
    last: int
    title: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SplitPart:
    title: str
    lore: str
    aliases: tuple[str, ...] = ()
    separator: str = ""


@dataclass(frozen=True, slots=True)
class TextSplit:
    """The entries of a split text; see the module docstring for how they rebuild it."""

    leading: str
    parts: tuple[SplitPart, ...]
    notes: tuple[str, ...] = ()

    def joined(self) -> str:
        return self.leading + "".join(part.lore + part.separator for part in self.parts)


@dataclass(slots=True)
class _Draft:
    start: int
    end: int
    title: str | None
    aliases: tuple[str, ...] = ()
    heading_only: bool = False
    pieces: list[tuple[int, int]] = field(default_factory=list)


# --- units -----------------------------------------------------------------------------------


def heading_title(line: str) -> str | None:
    """The title a heading line gives: Markdown ``#``, a bold-only line, ``Title:``/``Name:``,
    or a short ALL-CAPS line without sentence punctuation; else None."""
    stripped = line.strip()
    for pattern, group in ((_ATX, 1), (_BOLD, 2), (_FIELD, 1)):
        found = pattern.match(line.rstrip("\r\n"))
        if found:
            return found.group(group).strip() or None
    cased = [ch for ch in stripped if ch.isalpha() and ch.lower() != ch.upper()]
    if (
        3 <= len(stripped) <= 80
        and len(cased) >= 2
        and stripped.upper() == stripped
        and stripped[-1] not in SENTENCE_END + ",;"
        and len(stripped.split()) <= 10
    ):
        return stripped
    return None


def _span(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` narrowed to its first and last non-whitespace characters."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def units(text: str) -> list[Unit]:
    """The paragraphs of ``text``; a heading line (or a line with a ``===``/``---``
    underline) always starts a new one."""
    lines = [(m.start(), m.end(), m.group()) for m in _LINE.finditer(text)]
    found: list[Unit] = []
    current: list[int] = []  # indexes into lines
    heading: str | None = None

    def close() -> None:
        nonlocal heading
        if current:
            start, end = _span(text, lines[current[0]][0], lines[current[-1]][1])
            underlined = len(current) == 2 and _UNDERLINE.match(lines[current[1]][2])
            body = heading is None or (len(current) > 1 and not underlined)
            found.append(Unit(start, end, heading, body))
        current.clear()
        heading = None

    for i, (_, _, line) in enumerate(lines):
        if not line.strip():
            close()
            continue
        following = lines[i + 1][2] if i + 1 < len(lines) else ""
        title = heading_title(line)
        if title is None and _UNDERLINE.match(following) and not _UNDERLINE.match(line):
            title = line.strip()
        if title is not None and not (current and _UNDERLINE.match(line)):
            close()
            heading = title
        current.append(i)
    close()
    return found


def heading_groups(found: Sequence[Unit], first: int = 0, last: int | None = None) -> list[Group]:
    """Deterministic grouping of units ``first..last``: each heading starts an entry (units
    before the first heading make one); without headings, one entry per paragraph."""
    stop = len(found) - 1 if last is None else last
    indexes = range(first, stop + 1)
    if not any(found[i].heading for i in indexes):
        return [Group(i, i) for i in indexes]
    groups: list[Group] = []
    for i in indexes:
        if found[i].heading is not None or not groups:
            groups.append(Group(i, i, found[i].heading))
        else:
            groups[-1] = replace(groups[-1], last=i)
    return groups


def cover(groups: Sequence[Group], found: Sequence[Unit]) -> list[Group]:
    """``groups`` (ordered, not overlapping) with every unit they miss grouped by headings."""
    out: list[Group] = []
    nxt = 0
    for group in groups:
        if group.first > nxt:
            out.extend(heading_groups(found, nxt, group.first - 1))
        out.append(group)
        nxt = group.last + 1
    if nxt < len(found):
        out.extend(heading_groups(found, nxt))
    return out


# --- limits ----------------------------------------------------------------------------------


def _drafts(found: Sequence[Unit], groups: Sequence[Group]) -> list[_Draft]:
    drafts = []
    for group in groups:
        head = found[group.first]
        drafts.append(
            _Draft(
                start=head.start,
                end=found[group.last].end,
                title=group.title or head.heading,
                aliases=group.aliases,
                heading_only=group.first == group.last and not head.body,
            )
        )
    return drafts


def _join(a: _Draft, b: _Draft) -> _Draft:
    title = b.title if a.heading_only and b.title else (a.title or b.title)
    return _Draft(a.start, b.end, title, a.aliases + b.aliases, heading_only=False)


def _preview(text: str) -> str:
    words = " ".join(text.split())
    return words if len(words) <= 40 else words[:39] + "…"


def _join_short(text: str, drafts: list[_Draft], limits: Limits, notes: list[str]) -> list[_Draft]:
    """One pass: short parts join the part before; lone headings join the part after."""
    out: list[_Draft] = []
    pending: _Draft | None = None
    for index, draft in enumerate(drafts):
        if pending is not None:
            draft, pending = _join(pending, draft), None
        is_last = index == len(drafts) - 1
        if draft.heading_only and not is_last:
            pending = draft
            continue
        size = weighted_length(text[draft.start : draft.end])
        if draft.heading_only and out:  # a heading with nothing after it closes the text
            out[-1] = _join(out[-1], draft)
            continue
        if size < limits.lore_min:
            if out:
                notes.append(
                    f"“{_preview(text[draft.start : draft.end])}” ({size} characters, under the "
                    f"{limits.lore_min}-character minimum) was joined to the entry before it"
                )
                out[-1] = _join(out[-1], draft)
                continue
            if not is_last:
                pending = draft
                continue
        out.append(draft)
    if pending is not None:
        if out:
            out[-1] = _join(out[-1], pending)
        else:
            out.append(pending)
    return out


def _cuts(text: str, lo: int, hi: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """Every (end of this piece, start of the next) that ``pattern`` gives in ``[lo, hi]``."""
    found = []
    for match in pattern.finditer(text, lo, hi):
        if pattern is _SENTENCE:
            if match.group(1) is not None:
                found.append((match.end(1), match.end(2)))
            else:
                found.append((match.end(3), match.end(3)))
        else:
            found.append((match.start(), match.end()))
    return found


def _best_cut(text: str, start: int, end: int, size: int, minimum: int) -> tuple[int, int] | None:
    """The cut nearest the ideal point (an equal share) at the strongest boundary kind that
    leaves a rest fitting in the remaining pieces and no side under ``minimum`` (weighted);
    None when no boundary is in reach."""
    left = end - start
    pieces = math.ceil(left / size)
    ideal = start + math.ceil(left / pieces)
    lo, hi = start + (ideal - start) // 2, start + size
    for pattern in (_PARAGRAPH_BREAK, _LINE_BREAK, _SENTENCE, _SPACE):
        fitting = [
            cut
            for cut in _cuts(text, lo, hi + 1, pattern)
            if start < cut[0] <= hi
            and end - cut[1] <= (pieces - 1) * size
            and weighted_length(text[start : cut[0]].strip()) >= minimum
            and weighted_length(text[cut[1] : end].strip()) >= minimum
        ]
        if fitting:
            return min(fitting, key=lambda cut: abs(cut[0] - ideal))
    return None


def _pieces(text: str, start: int, end: int, size: int, minimum: int) -> list[tuple[int, int]]:
    """``[start, end)`` in as few pieces of at most ``size`` characters as fit, near-equal,
    each bounded by non-whitespace (the importers' ``split_lore`` scheme, on spans)."""
    pieces: list[tuple[int, int]] = []
    while end - start > size:
        cut = _best_cut(text, start, end, size, minimum)
        if cut is None:
            left = end - start
            hard = start + math.ceil(left / math.ceil(left / size))
            while hard > start + 1 and unicodedata.combining(text[hard]):
                hard -= 1  # never strand a combining mark at the start of a piece
            cut = (hard, hard)
        _, piece_end = _span(text, start, cut[0])
        pieces.append((start, piece_end))
        start, _ = _span(text, cut[1], end)
    pieces.append((start, end))
    return pieces


# --- the split -------------------------------------------------------------------------------


def check_splittable(text: str, *, limits: Limits = LIMITS) -> None:
    """The text is within the split limit and holds at least one entry's worth of lore."""
    check_split_text(text, limits=limits)
    if weighted_length(text.strip()) < limits.lore_min:
        raise InvalidInput(
            f"text holds less than one entry: lore needs at least {limits.lore_min} characters.",
            field="text",
        )


def split_text(
    text: str, groups: Sequence[Group] | None = None, *, limits: Limits = LIMITS
) -> TextSplit:
    """Entries whose lore is ``text``, word for word, every one within the limits.

    Args:
        text: at most the "text to split into entries" limit (40,000 characters).
        groups: unit ranges to make entries of (a model's proposal), ordered and not
            overlapping; units they miss are grouped by headings. None: by headings alone.

    Raises:
        LimitExceeded: the text is over the limit. InvalidInput: it holds less than one entry.
    """
    check_splittable(text, limits=limits)
    found = units(text)
    notes: list[str] = []
    drafts = _join_short(text, _drafts(found, cover(groups or [], found)), limits, notes)
    titles: list[str] = []
    spans: list[tuple[int, int, tuple[str, ...]]] = []
    for number, draft in enumerate(drafts, 1):
        lore = text[draft.start : draft.end]
        title = clean_title(draft.title, limits) or opening_title(lore, limits) or f"Part {number}"
        pieces = _pieces(text, draft.start, draft.end, limits.lore_max, limits.lore_min)
        if len(pieces) > 1:
            notes.append(
                f"“{shorten(title, 40)}” ({len(lore):,} characters) was cut into "
                f"{len(pieces)} entries of at most {limits.lore_max:,}"
            )
        for index, (start, end) in enumerate(pieces, 1):
            suffix = f" ({index})" if len(pieces) > 1 else ""
            titles.append(shorten(title, limits.entry_title_max - len(suffix)) + suffix)
            spans.append((start, end, draft.aliases))
    return _assemble(text, spans, unique_titles(titles, limits), notes, limits)


def _assemble(
    text: str,
    spans: list[tuple[int, int, tuple[str, ...]]],
    titles: list[str],
    notes: list[str],
    limits: Limits,
) -> TextSplit:
    parts = []
    for i, ((start, end, aliases), title) in enumerate(zip(spans, titles, strict=True)):
        following = spans[i + 1][0] if i + 1 < len(spans) else len(text)
        lore = text[start:end]
        if end - start > limits.lore_max or weighted_length(lore) < limits.lore_min:
            raise InvalidInput(
                "text cannot be cut into entries within the limits (lore "
                f"{limits.lore_min}–{limits.lore_max:,} characters) without changing it: "
                f"“{_preview(lore)}” has {len(lore):,} characters around little text. "
                "Remove the long runs of spaces.",
                field="text",
            )
        parts.append(
            SplitPart(
                title=title,
                lore=lore,
                aliases=unique_aliases(aliases, title, limits),
                separator=text[end:following],
            )
        )
    return TextSplit(leading=text[: spans[0][0]], parts=tuple(parts), notes=tuple(notes))
