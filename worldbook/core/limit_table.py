"""The DESIGN §6 limit table and the generic checks built on it: clean text, text, counts (the
one way a count over or under its limit is worded), one turn's chat.

:mod:`worldbook.core.limits` re-exports all of this (callers import that module); the draft
validators (books, entries, tags, settings) live there.

Lengths are counted in code points. For the *minimums* only, an East Asian wide or full-width
character counts as two (DESIGN §6: "10 Chinese characters say as much as 20 Latin ones"), using
the Unicode East Asian Width property (UAX #11, values ``W`` and ``F``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from worldbook.errors import InvalidInput, LimitExceeded


@dataclass(frozen=True, slots=True)
class Limits:
    """The DESIGN §6 table (plus the DESIGN §3 classic-mode ranges)."""

    book_title_max: int = 120
    book_description_max: int = 2_000
    tags_max: int = 20
    tag_max: int = 50
    entries_per_book: int = 2_000
    entry_title_min: int = 2
    entry_title_max: int = 100
    lore_min: int = 20
    lore_max: int = 20_000
    classic_lore_min: int = 1  # classic lorebooks hold short keyword snippets
    aliases_max: int = 50
    alias_max: int = 120
    publish_min_entries: int = 10
    import_batch: int = 500
    split_text_max: int = 40_000
    preview_message_max: int = 2_000
    # One turn's chat: bounded so no request can make the service embed or scan unbounded
    # text (a 10 MB message once took 225 s and 0.6 GB, DESIGN §6).
    message_max: int = 20_000
    turn_text_max: int = 100_000
    bulk_action_max: int = 500
    # DESIGN §3 ranges for classic entries and book settings.
    probability_max: int = 100
    scan_depth_max: int = 100
    token_budget_min: int = 100
    token_budget_max: int = 32_000
    min_activations_max: int = 100
    min_activations_depth_max: int = 1_000  # a turn carries at most 1,000 messages
    # JSON objects kept verbatim (``settings``, ``extensions``): bounded so that whatever is
    # stored can always be returned (a 256-deep object once saved, then failed every read).
    json_depth_max: int = 64
    json_bytes_max: int = 262_144


INT32_MAX = 2**31 - 1

LIMITS = Limits()
"""The limits in force; pass another :class:`Limits` only in tests."""


def weighted_length(text: str) -> int:
    """Length where East Asian wide/full-width characters count as two (UAX #11 W/F)."""
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def fmt_count(value: int) -> str:
    return f"{value:,}"


def check_clean_text(value: str, *, field: str) -> None:
    """Reject NUL characters and lone surrogates (text that is not valid UTF-8)."""
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL character; remove it.", field=field)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field} is not valid UTF-8 text (lone surrogate at position {exc.start}); "
            "re-encode the source as UTF-8.",
            field=field,
        ) from exc


def check_text(
    value: object,
    *,
    field: str,
    limit: str,
    max_len: int,
    min_len: int = 0,
    blank_ok: bool = True,
) -> str:
    """Check one string: type, clean text, not blank (unless allowed), min (weighted) and max."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be text.", field=field)
    check_clean_text(value, field=field)
    if not blank_ok and not value.strip():
        raise InvalidInput(f"{field} must not be empty or only whitespace.", field=field)
    if min_len:
        allowed = f"{fmt_count(min_len)}–{fmt_count(max_len)} characters"
    else:
        allowed = f"at most {fmt_count(max_len)} characters"
    if len(value) > max_len:
        raise LimitExceeded(
            limit=limit, allowed=allowed, actual=f"{fmt_count(len(value))} characters", field=field
        )
    if min_len:
        weight = weighted_length(value.strip())
        if weight < min_len:
            raise LimitExceeded(
                limit=limit,
                allowed=allowed,
                actual=f"{fmt_count(weight)} characters",
                field=field,
                hint="East Asian wide characters count as two for the minimum.",
            )
    return value


def check_count(
    count: int,
    *,
    limit: str,
    field: str,
    unit: str,
    allowed_max: int | None = None,
    allowed_min: int = 0,
    scope: str = "",
    detail: str = "",
    hint: str = "",
) -> None:
    """Reject more than ``allowed_max`` or fewer than ``allowed_min`` items, naming the bound
    broken: "{limit} must be at most {allowed_max} {unit}{scope}; got {count} {unit}{detail}."
    (``scope`` says what is counted, ``detail`` adds to the count sent)."""
    if allowed_max is not None and count > allowed_max:
        bound = f"at most {fmt_count(allowed_max)}"
    elif count < allowed_min:
        bound = f"at least {fmt_count(allowed_min)}"
    else:
        return
    raise LimitExceeded(
        limit=limit,
        allowed=f"{bound} {unit}{scope}",
        actual=f"{fmt_count(count)} {unit}{detail}",
        field=field,
        hint=hint,
    )


def check_message(text: str, *, field: str = "message", limits: Limits = LIMITS) -> None:
    check_text(text, field=field, limit="message length", max_len=limits.message_max)


def check_turn_text(total: int, *, field: str = "messages", limits: Limits = LIMITS) -> None:
    """The characters of all a turn's messages together."""
    check_count(
        total,
        limit="text per turn",
        allowed_max=limits.turn_text_max,
        scope=" over all messages",
        field=field,
        unit="characters",
        hint="Send only the recent messages; the selection reads the last few.",
    )


def check_preview_message(text: str, *, field: str = "message", limits: Limits = LIMITS) -> None:
    check_text(
        text,
        field=field,
        limit="preview message",
        max_len=limits.preview_message_max,
        blank_ok=False,
    )
