"""Every DESIGN §6 limit and the pure checks that enforce them: the module callers import.

The store validates every draft through this module before it writes anything; the API and the
importers reuse :data:`LIMITS` for their own early checks (bulk actions, preview messages, text to
split) so the numbers live in exactly one place. Errors name the field (``entries[3].title``), the
limit and the value sent.

The table itself, the generic text and count checks and the per-turn checks live in
:mod:`worldbook.core.limit_table` (re-exported here); this module holds the draft validators
(books, entries, tags, settings) and the checks of writes and listings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, get_args

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.glosses import READER_LANGUAGES_SETTING, check_reader_languages
from worldbook.core.json_limits import check_json_value
from worldbook.core.limit_table import (
    INT32_MAX,
    LIMITS,
    Limits,
    check_clean_text,
    check_count,
    check_message,
    check_preview_message,
    check_text,
    check_turn_text,
    fmt_count,
    weighted_length,
)
from worldbook.core.records import EntryQuery
from worldbook.core.types import BookMode, Role, Visibility
from worldbook.errors import InvalidInput, LimitExceeded

__all__ = [
    "INT32_MAX",
    "LIMITS",
    "Limits",
    "check_clean_text",
    "check_count",
    "check_message",
    "check_preview_message",
    "check_text",
    "check_turn_text",
    "weighted_length",
]

_SELECTIVE_LOGIC = range(4)  # SillyTavern: AND_ANY, NOT_ALL, NOT_ANY, AND_ALL
_ROLES = frozenset(get_args(Role))


def _check_str_list(
    values: object,
    *,
    field: str,
    limit: str,
    item_limit: str,
    max_items: int,
    max_len: int,
    unit: str,
) -> None:
    if not isinstance(values, list | tuple):
        raise InvalidInput(f"{field} must be a list of text.", field=field)
    check_count(len(values), limit=limit, allowed_max=max_items, field=field, unit=unit)
    for i, item in enumerate(values):
        check_text(item, field=f"{field}[{i}]", limit=item_limit, max_len=max_len)
        if not item.strip():
            raise InvalidInput(
                f"{field}[{i}] must not be empty or only whitespace.", field=f"{field}[{i}]"
            )


def check_json_text(value: object, *, field: str, limits: Limits = LIMITS) -> None:
    """A JSON object kept verbatim, within the depth and size limits (see json_limits)."""
    check_json_value(
        value, field=field, depth_max=limits.json_depth_max, bytes_max=limits.json_bytes_max
    )


def _check_int(value: object, *, field: str, low: int | None, high: int | None) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(f"{field} must be a whole number.", field=field)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low if low is not None else '-∞'}–{high if high is not None else '∞'}"
        raise InvalidInput(f"{field} must be within {bounds}; got {value}.", field=field)


def validate_tags(tags: object, *, field: str = "tags", limits: Limits = LIMITS) -> None:
    _check_str_list(
        tags,
        field=field,
        limit="tags",
        item_limit="tag",
        max_items=limits.tags_max,
        max_len=limits.tag_max,
        unit="tags",
    )


BOOK_SETTINGS: dict[str, type] = {
    "scan_depth": int,  # DESIGN §3 ranges (Limits)
    "token_budget": int,
    "recursive_scanning": bool,
    "recursive": bool,  # the importers' old name of recursive_scanning (read both)
    "case_sensitive": bool,  # the rest of what the classic engine reads (ClassicSettings)
    "whole_words": bool,
    "group_scoring": bool,
    "min_activations": int,
    "min_activations_depth_max": int,
    "living_world": bool,  # the AI may add to the book during its owner's turns (ADR 0006)
    READER_LANGUAGES_SETTING: list,  # languages the app's model writes glosses in (ADR 0023)
}
"""The book settings worldbook reads (the classic engine's, the living-world switch and the
readers' languages), by type; other keys are kept verbatim."""


def validate_book_settings(
    settings: Mapping[str, Any], *, field: str = "settings", limits: Limits = LIMITS
) -> None:
    """Types and DESIGN §3 ranges of the classic-mode book settings that are present."""
    check_json_text(settings, field=field)
    ranges = {
        "scan_depth": (0, limits.scan_depth_max),
        "token_budget": (limits.token_budget_min, limits.token_budget_max),
        "min_activations": (0, limits.min_activations_max),
        "min_activations_depth_max": (0, limits.min_activations_depth_max),
    }
    for name in (n for n in BOOK_SETTINGS if n in settings):  # in a fixed order
        where = f"{field}.{name}"
        if name in ranges:
            _check_int(settings[name], field=where, low=ranges[name][0], high=ranges[name][1])
        elif name == READER_LANGUAGES_SETTING:
            check_reader_languages(settings[name], field=where)
        elif not isinstance(settings[name], bool):
            raise InvalidInput(f"{where} must be true or false.", field=where)


class _Text(NamedTuple):
    """One text field of a draft and its DESIGN §6 limit (see :func:`check_text`)."""

    name: str
    limit: str
    max_len: int
    min_len: int = 0
    blank_ok: bool = True


def _check_texts(draft: BookDraft | EntryDraft, field: str, *texts: _Text) -> None:
    """The draft's text fields, in the order given, each reported as ``{field}.{name}``."""
    for text in texts:
        check_text(
            getattr(draft, text.name),
            field=f"{field}.{text.name}",
            limit=text.limit,
            max_len=text.max_len,
            min_len=text.min_len,
            blank_ok=text.blank_ok,
        )


def validate_book_draft(draft: BookDraft, *, field: str = "book", limits: Limits = LIMITS) -> None:
    """Check a book's own fields (entries are checked separately, in batches)."""
    _check_texts(
        draft,
        field,
        _Text("title", "book title", limits.book_title_max, blank_ok=False),
        _Text("description", "book description", limits.book_description_max),
    )
    validate_tags(draft.tags, field=f"{field}.tags", limits=limits)
    if draft.visibility not in tuple(Visibility):
        raise InvalidInput(
            f"{field}.visibility must be one of {', '.join(Visibility)}.",
            field=f"{field}.visibility",
        )
    if draft.mode not in tuple(BookMode):
        raise InvalidInput(
            f"{field}.mode must be one of {', '.join(BookMode)}.", field=f"{field}.mode"
        )
    validate_book_settings(draft.settings, field=f"{field}.settings", limits=limits)
    check_json_text(draft.extensions, field=f"{field}.extensions")


def validate_entry_draft(
    draft: EntryDraft,
    *,
    field: str = "entry",
    mode: BookMode = BookMode.WORLD,
    limits: Limits = LIMITS,
) -> None:
    """Check one entry draft; ``mode`` decides the lore minimum (classic books accept 1)."""
    lore_min = limits.classic_lore_min if mode == BookMode.CLASSIC else limits.lore_min
    _check_texts(
        draft,
        field,
        _Text(
            "title", "entry title", limits.entry_title_max, limits.entry_title_min, blank_ok=False
        ),
        _Text("lore", "entry lore", limits.lore_max, lore_min, blank_ok=False),
    )
    _check_str_list(
        draft.aliases,
        field=f"{field}.aliases",
        limit="aliases per entry",
        item_limit="alias",
        max_items=limits.aliases_max,
        max_len=limits.alias_max,
        unit="aliases",
    )
    _check_texts(draft, field, _Text("comment", "entry comment", limits.lore_max))
    _check_classic_fields(draft, field=field, limits=limits)
    check_json_text(draft.extensions, field=f"{field}.extensions", limits=limits)


def _check_classic_fields(draft: EntryDraft, *, field: str, limits: Limits) -> None:
    """The DESIGN §3 fields of an entry (kept in every mode, so a book can switch)."""
    for name in ("keys", "secondary_keys", "decorators"):
        values = getattr(draft, name)
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            raise InvalidInput(f"{field}.{name} must be a list of text.", field=f"{field}.{name}")
        for i, value in enumerate(values):
            check_clean_text(value, field=f"{field}.{name}[{i}]")
    for name in ("canon", "enabled", "selective", "constant"):
        if not isinstance(getattr(draft, name), bool):
            raise InvalidInput(f"{field}.{name} must be true or false.", field=f"{field}.{name}")
    for name in ("whole_words", "case_sensitive"):
        if getattr(draft, name) is not None and not isinstance(getattr(draft, name), bool):
            raise InvalidInput(
                f"{field}.{name} must be true, false or null.", field=f"{field}.{name}"
            )
    _check_int(draft.selective_logic, field=f"{field}.selective_logic", low=0, high=3)
    # 32-bit columns: a larger number must be a 422 here, not a database error later.
    _check_int(draft.order, field=f"{field}.order", low=-INT32_MAX, high=INT32_MAX)
    if draft.priority is not None:
        _check_int(draft.priority, field=f"{field}.priority", low=-INT32_MAX, high=INT32_MAX)
    _check_int(draft.probability, field=f"{field}.probability", low=0, high=limits.probability_max)
    if draft.scan_depth is not None:
        _check_int(draft.scan_depth, field=f"{field}.scan_depth", low=0, high=limits.scan_depth_max)
    if draft.role not in _ROLES:
        raise InvalidInput(
            f"{field}.role must be one of {', '.join(sorted(_ROLES))}.", field=f"{field}.role"
        )


def validate_entry_drafts(
    drafts: Sequence[EntryDraft],
    *,
    mode: BookMode = BookMode.WORLD,
    field: str = "entries",
    limits: Limits = LIMITS,
) -> None:
    """Check a batch (≤ the import batch limit) and every draft in it (``entries[i].…``)."""
    check_batch(len(drafts), field=field, limits=limits)
    for i, draft in enumerate(drafts):
        validate_entry_draft(draft, field=f"{field}[{i}]", mode=mode, limits=limits)


def check_batch(count: int, *, field: str = "entries", limits: Limits = LIMITS) -> None:
    check_count(
        count, limit="import batch", allowed_max=limits.import_batch, field=field, unit="entries"
    )


def check_entries_per_book(
    current: int, adding: int, *, field: str = "entries", limits: Limits = LIMITS
) -> None:
    """Reject a write that would take a book past the entries-per-book limit."""
    check_count(
        current + adding,
        limit="entries per book",
        allowed_max=limits.entries_per_book,
        detail=f" ({fmt_count(current)} already in the book)",
        field=field,
        unit="entries",
        hint="Split the lore over several books.",
    )


def check_world_mode_lore(
    entries: Iterable[tuple[str, object]], *, limits: Limits = LIMITS
) -> None:
    """Leaving classic mode: every entry (id, lore), in book order, meets the world lore
    minimum; the first that does not is reported against the ``mode`` field."""
    for i, (entry_id, lore) in enumerate(entries):
        try:
            check_text(
                lore,
                field=f"entries[{i}].lore",
                limit="entry lore",
                min_len=limits.lore_min,
                max_len=limits.lore_max,
            )
        except LimitExceeded as exc:
            raise LimitExceeded(
                limit=exc.limit,
                allowed=exc.allowed,
                actual=exc.actual,
                field="mode",
                hint=f"Entry {entry_id!r} is too short for world mode; lengthen it first.",
            ) from exc


def check_publish(entry_count: int, *, field: str = "visibility", limits: Limits = LIMITS) -> None:
    """A public book needs at least ``publish_min_entries`` entries."""
    check_count(
        entry_count,
        limit="entries required to publish",
        allowed_min=limits.publish_min_entries,
        field=field,
        unit="entries",
        hint="Add entries or keep the book private or unlisted.",
    )


def check_bulk(count: int, *, field: str = "ids", limits: Limits = LIMITS) -> None:
    check_count(
        count, limit="bulk action", allowed_max=limits.bulk_action_max, field=field, unit="entries"
    )


def check_split_text(text: str, *, field: str = "text", limits: Limits = LIMITS) -> None:
    check_text(text, field=field, limit="text to split into entries", max_len=limits.split_text_max)


def check_page(limit: int | None, offset: int, *, max_limit: int = 500) -> None:
    """A listing page: 1–``max_limit`` rows (None = all, for entries) from ``offset`` ≥ 0."""
    if (limit is not None and not 1 <= limit <= max_limit) or offset < 0:
        raise InvalidInput(f"limit must be 1–{max_limit} and offset ≥ 0.", field="limit")


def check_entry_query(query: EntryQuery) -> None:
    if query.sort not in ("position", "most_used"):
        raise InvalidInput('sort must be "position" or "most_used".', field="sort")
    check_page(query.limit, query.offset, max_limit=LIMITS.entries_per_book)
