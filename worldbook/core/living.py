"""The living world's pure rules: what a write is and how it is recognised again, how AI text
joins an entry, and how many writes a book takes (ADR 0006; docs/ai-authoring.md §4
"Living world"; decisions in docs/decisions.md). Parsing a tool call is
:mod:`worldbook.core.living_calls`; write and undo are :mod:`worldbook.core.living_ops`.

- **Append-only.** An entry the AI wrote to keeps a *base* (its text before any live AI
  segment: a person's text, or the AI's own created lore) and its live appended *segments*;
  its lore is always ``compose(base, segments)``: the parts joined by a blank line. Undoing an
  append removes its segment and recomposes — never text surgery on a person's words.
- **A person's edit wins.** The store remembers a hash of the lore it last composed and a
  fingerprint of every field. When a person changed the lore since, the whole current lore
  becomes the base and the earlier AI writes to it are *edited* (kept, no longer undoable);
  when a person changed other fields only, the create that made the entry is edited (undoing
  it would trash their work) but appends can still be undone.
- **Names** are compared in the selection matcher's form (NFKC, casefold, script-aware
  boundaries: :func:`worldbook.core.matching.match_form`); **"already in the entry"** folds
  both texts to letters and digits (Marinara's rule, with Unicode folding, so Cyrillic or CJK
  facts are not all "the same", the Aventuras ``foldName`` bug).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from worldbook.core import limits as lim
from worldbook.core.drafts import EntryDraft, entry_values
from worldbook.core.limit_table import check_count
from worldbook.core.living_tools import WriteTool
from worldbook.core.matching import char_class, match_form, normalize
from worldbook.core.records import EntryRecord
from worldbook.core.types import BookMode
from worldbook.errors import RateLimited

WriteEffect = Literal["created", "appended", "unchanged"]
WriteState = Literal["live", "undone", "edited", "deleted"]
UndoReason = Literal["undo", "regenerate", "create_undone"]
SEGMENT_JOIN = "\n\n"
"""How a base and its segments are joined: a paragraph break, so each fact reads on its own."""
LIVING_SETTING = "living_world"


@dataclass(frozen=True, slots=True)
class LivingLimits:
    """How much the AI may write to one book (rolling window; counted under the book lock)."""

    live_per_window: int = 30
    attempts_per_window: int = 90
    window: timedelta = timedelta(hours=24)


@dataclass(frozen=True, slots=True)
class WriteCall:
    """One validated tool call, ready for the store (:func:`parse_call`)."""

    book_id: str
    chat_id: str
    message_id: str
    swipe: int | None
    call_id: str
    tool: WriteTool
    text: str  # the created lore, or the appended text
    title: str | None = None
    entry_id: str | None = None
    aliases: tuple[str, ...] = ()
    mode: BookMode = BookMode.WORLD

    @property
    def call_key(self) -> str:
        """What makes a call the same call again: its chat, message, swipe and call id."""
        return sha(_canonical([self.chat_id, self.message_id, self.swipe, self.call_id]))

    @property
    def arguments_sha(self) -> str:
        """The call's tool and arguments, to refuse a reused call id with other arguments."""
        args = [self.tool, self.title, self.entry_id, self.text, list(self.aliases)]
        return sha(_canonical(args))


@dataclass(frozen=True, slots=True)
class WriteRecord:
    """One row of a book's write log; ``state`` is computed when read (:func:`state_of`)."""

    id: str
    seq: int
    book_id: str
    chat_id: str
    message_id: str
    swipe: int | None
    call_id: str
    call_key: str
    arguments_sha: str
    tool: WriteTool
    effect: WriteEffect
    entry_id: str
    entry_title: str
    text: str
    created_at: datetime
    undone_at: datetime | None = None
    undo_reason: UndoReason | None = None
    edited_at: datetime | None = None
    state: WriteState = "live"


@dataclass(frozen=True, slots=True)
class LivingState:
    """What the store remembers of an entry the AI wrote to (see the module doc)."""

    entry_id: str
    book_id: str
    base: str
    lore_sha: str
    fields_sha: str


@dataclass(frozen=True, slots=True)
class TrashedEntry:
    """An entry in its book's trash (put there by undoing the write that created it)."""

    entry_id: str
    book_id: str
    draft: EntryDraft
    position: int
    created_at: datetime
    trashed_at: datetime
    write_id: str | None


@dataclass(frozen=True, slots=True)
class WindowCounts:
    """A book's writes inside the rate window: all attempts, and the live ones."""

    attempts: int = 0
    first_attempt: datetime | None = None
    live: int = 0
    first_live: datetime | None = None


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    write: WriteRecord
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    """The writes undone (the one asked for first, then those it took along), the entries
    whose lore changed (to index again) and the entry moved to the trash, if any."""

    undone: tuple[WriteRecord, ...] = ()
    changed_entry_ids: tuple[str, ...] = ()
    trashed_entry_id: str | None = None
    already_undone: bool = False


# --- hashing and text rules -----------------------------------------------------------------


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fields_fingerprint(entry: EntryRecord) -> str:
    """A hash of every field a person can edit (list position is not an edit)."""
    return sha(_canonical(entry_values(entry.to_draft())))


def living_state(entry: EntryRecord, base: str) -> LivingState:
    """The state to remember right after a living-world write left ``entry`` as it is."""
    return LivingState(entry.id, entry.book_id, base, sha(entry.lore), fields_fingerprint(entry))


def compose(base: str, segments: Sequence[str]) -> str:
    """An entry's lore: its base, then each live segment, one paragraph each."""
    return SEGMENT_JOIN.join([base, *segments]) if segments else base


def name_key(text: str) -> str:
    """A title or alias as the selection's literal matcher compares it."""
    return " ".join(match_form(text).split())


def _fold(text: str) -> str:
    """Letters, digits and marks only (NFKC + casefold), one space between runs and between
    scripts with and without spaces."""
    kept = "".join(ch if char_class(ch) in "WU" else " " for ch in normalize(text))
    return " ".join(match_form(kept).split())


def already_in(text: str, lore: str) -> bool:
    """Whether ``text``'s letters and digits already appear, in order, in ``lore`` (at word
    boundaries in spaced scripts; anywhere in CJK, Thai…)."""
    needle = _fold(text)
    if not needle:
        return True
    left = "" if char_class(needle[0]) == "U" else " "
    right = "" if char_class(needle[-1]) == "U" else " "
    return f"{left}{needle}{right}" in f" {_fold(lore)} "


@dataclass(frozen=True, slots=True)
class NamedEntry:
    """An entry's names as the living world matches them."""

    entry_id: str
    title: str
    aliases: tuple[str, ...]
    enabled: bool


def named_entry(entries: Sequence[NamedEntry], names: Sequence[str]) -> str | None:
    """The first enabled entry (in list order) named by the first of ``names`` that names one.

    Disabled entries are never matched: to the living world they do not exist (DESIGN §2
    rule 1: nothing of theirs reaches the model, and a write's answer would)."""
    keys: dict[str, str] = {}
    for entry in entries:
        if entry.enabled:
            for name in (entry.title, *entry.aliases):
                keys.setdefault(name_key(name), entry.entry_id)
    for name in names:
        found = keys.get(name_key(name))
        if found is not None:
            return found
    return None


def check_composed(lore: str, *, field: str = "arguments.text") -> None:
    """The entry's lore after an append stays within the DESIGN §6 maximum."""
    check_count(
        len(lore),
        limit="entry lore",
        allowed_max=lim.LIMITS.lore_max,
        unit="characters",
        detail=" with this text",
        field=field,
        hint="The entry is full: record the fact in a new entry (lore_create).",
    )


def classic_keys(draft: EntryDraft, mode: BookMode) -> EntryDraft:
    """In a classic (keyword) book a created entry is triggered by its own names, or it could
    never fire (DESIGN §3)."""
    if mode == BookMode.CLASSIC:
        draft.keys = [draft.title, *draft.aliases]
    return draft


# --- states and limits ---------------------------------------------------------------------


def state_of(
    write: WriteRecord, entry: EntryRecord | None, state: LivingState | None
) -> WriteState:
    """A write's state now: undone, edited by a person since (kept for good), its entry
    deleted by a person, or live (can be undone)."""
    if write.undone_at is not None:
        return "undone"
    if write.edited_at is not None:
        return "edited"
    if write.effect == "unchanged":
        return "live"
    if entry is None:
        return "deleted"
    if state is None:
        return "edited"
    if write.effect == "created":
        return "live" if fields_fingerprint(entry) == state.fields_sha else "edited"
    return "live" if sha(entry.lore) == state.lore_sha else "edited"


def _wait(first: datetime | None, window: timedelta, at: datetime) -> tuple[int, datetime]:
    free_at = (first or at) + window
    return max(1, int((free_at - at).total_seconds() + 0.999)), free_at


def _duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes = max(1, (rest + 59) // 60) if not hours else rest // 60
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


_ATTEMPTS_REFUSED = (
    "living-world write attempts per book: at most {most} in {hours} hours, undone ones "
    "included; the next write is possible in {wait} (at {free_at})."
)
_LIVE_REFUSED = (
    "living-world writes per book: at most {most} live writes in {hours} hours; the next write "
    "is possible in {wait} (at {free_at}), or sooner when a write is undone."
)


def check_rate(counts: WindowCounts, limits: LivingLimits, at: datetime) -> None:
    """Refuse a write when the book's live writes or attempts in the window are at the limit
    (429 naming the limit and when the next write is possible)."""
    if counts.attempts >= limits.attempts_per_window:
        raise _refusal(
            _ATTEMPTS_REFUSED, limits.attempts_per_window, counts.first_attempt, limits, at
        )
    if counts.live >= limits.live_per_window:
        raise _refusal(_LIVE_REFUSED, limits.live_per_window, counts.first_live, limits, at)


def _refusal(
    message: str, most: int, first: datetime | None, limits: LivingLimits, at: datetime
) -> RateLimited:
    """The 429 of a limit of ``most`` writes whose oldest counted one is ``first``: ``message``
    names ``{most}``, ``{hours}`` (the window), ``{wait}`` and ``{free_at}`` (the next chance)."""
    wait, free_at = _wait(first, limits.window, at)
    hours = round(limits.window.total_seconds() / 3600)
    text = message.format(
        most=most, hours=hours, wait=_duration(wait), free_at=free_at.isoformat(timespec="seconds")
    )
    return RateLimited(text, retry_after_s=wait, field="book_id")


def is_living(settings: Mapping[str, Any]) -> bool:
    """Whether a book's settings turn the living world on."""
    return settings.get(LIVING_SETTING) is True
