"""The pure rules every store applies — the SQL store and the in-memory fake alike.

Kept in one place so the fake that most tests run against cannot drift from the real store:
ids, a new book's first record, the checks of owner/chat/target arguments, and how one served
turn becomes usage counts (API keys: :mod:`worldbook.core.api_keys`).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime

from worldbook.core import limits
from worldbook.core.drafts import BookDraft
from worldbook.core.glosses import GLOSS_LANGUAGES, Gloss
from worldbook.core.records import TARGET_KINDS, USAGE_OF_VIA, USAGE_VIAS, BookRecord
from worldbook.core.types import BookMode, Visibility
from worldbook.errors import InvalidInput

MAX_USER_ID = 255
MAX_GLOSS_MODEL = 255
MAX_CONTENT_HASH = 64


def new_id() -> str:
    """An unguessable id (128 random bits, URL-safe) that starts with a letter or digit.

    An id starting with ``-`` would be read as an option by every command line that takes it
    (``worldbook export -Ab…``), so such draws are simply redrawn.
    """
    while True:
        candidate = secrets.token_urlsafe(16)
        if candidate[0].isalnum():
            return candidate


def new_book_record(
    book_id: str, owner_id: str, draft: BookDraft, *, at: datetime, entry_count: int = 0
) -> BookRecord:
    """A book as first stored: version 1, nothing indexed yet, created and updated ``at``."""
    return BookRecord(
        id=book_id,
        owner_id=owner_id,
        title=draft.title,
        description=draft.description,
        tags=tuple(draft.tags),
        visibility=Visibility(draft.visibility),
        mode=BookMode(draft.mode),
        settings=dict(draft.settings),
        extensions=dict(draft.extensions),
        created_at=at,
        updated_at=at,
        deleted_at=None,
        version=1,
        index_version=0,
        entry_count=entry_count,
    )


def changed_book(book: BookRecord, changes: Mapping[str, object]) -> BookDraft:
    """``book``'s draft with ``changes`` applied and validated (DESIGN §6).

    Making a book public needs the entries a public book must have (``check_publish``).
    """
    draft = book.to_draft()
    for name, value in changes.items():
        setattr(draft, name, value)
    limits.validate_book_draft(draft, field="book")
    if draft.visibility == Visibility.PUBLIC and book.visibility != Visibility.PUBLIC:
        limits.check_publish(book.entry_count, field="visibility")
    return draft


def check_user_id(user_id: object, *, field: str = "user_id") -> str:
    if not isinstance(user_id, str) or not user_id.strip() or len(user_id) > MAX_USER_ID:
        raise InvalidInput(f"{field} must be 1–{MAX_USER_ID} characters of text.", field=field)
    if "\x00" in user_id:
        raise InvalidInput(f"{field} contains a NUL character.", field=field)
    return user_id


def check_target(target_kind: str, target_id: str) -> None:
    """What a book is attached to: a known kind and an id."""
    if target_kind not in TARGET_KINDS:
        raise InvalidInput(
            f"target_kind must be one of {', '.join(TARGET_KINDS)}.", field="target_kind"
        )
    check_user_id(target_id, field="target_id")


def check_chat(owner_id: str, chat_id: str) -> None:
    check_user_id(owner_id, field="owner_id")
    check_user_id(chat_id, field="chat_id")


def check_keep(keep_log: int) -> None:
    """How many request-log rows of a chat to keep."""
    if not isinstance(keep_log, int) or keep_log < 0:
        raise InvalidInput(f"keep_log must be ≥ 0; got {keep_log!r}.", field="keep_log")


def turn_usage(
    book_ids: Sequence[str], uses: Sequence[tuple[str, str]]
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """One served turn as usage counts: one turn per book, one use per entry (first ``via``
    wins; selection vias are mapped by ``USAGE_OF_VIA``)."""
    per_entry: dict[str, str] = {}
    for entry_id, via in uses:
        per_entry.setdefault(entry_id, USAGE_OF_VIA.get(via, via))
    return dict.fromkeys(book_ids, 1), {e: {via: 1} for e, via in per_entry.items()}


def check_usage_vias(entry_counts: Mapping[str, Mapping[str, int]]) -> None:
    """Every count is of a known via (canon | whole_book | full | index)."""
    for counts in entry_counts.values():
        unknown = set(counts) - set(USAGE_VIAS)
        if unknown:
            raise InvalidInput(f"unknown usage via {sorted(unknown)[0]!r}.", field="uses")


def unique_glosses(glosses: Sequence[Gloss]) -> dict[tuple[str, str], Gloss]:
    """The glosses to save by (entry id, language), the last of a repeated pair kept (as
    successive saves would), each checked to fit its columns on every backend alike.

    A language outside :data:`~worldbook.core.glosses.GLOSS_LANGUAGES` is a caller's bug
    (the book setting only accepts those), refused before anything is written."""
    found: dict[tuple[str, str], Gloss] = {}
    for gloss in glosses:
        if not isinstance(gloss, Gloss):
            raise InvalidInput("glosses must be Gloss records.", field="glosses")
        texts = (gloss.entry_id, gloss.name, gloss.gist, gloss.content_hash, gloss.model)
        if not all(isinstance(v, str) for v in texts):
            raise InvalidInput("a gloss's fields must be text.", field="glosses")
        if gloss.language not in GLOSS_LANGUAGES:
            raise InvalidInput(
                f"gloss language {gloss.language!r} is not one of the reader languages.",
                field="glosses",
            )
        if not gloss.model or len(gloss.model) > MAX_GLOSS_MODEL:
            raise InvalidInput(
                f"a gloss's model must be 1–{MAX_GLOSS_MODEL} characters.", field="glosses"
            )
        if len(gloss.content_hash) > MAX_CONTENT_HASH:
            raise InvalidInput("a gloss's content_hash is not an entry hash.", field="glosses")
        found[(gloss.entry_id, gloss.language)] = gloss
    return found


def check_gloss_languages(languages: Sequence[str] | None) -> list[str] | None:
    """The languages to narrow a deletion to (None: all); a lone string is refused, since
    ``"fr"`` iterated would silently mean ``["f", "r"]``."""
    if languages is None:
        return None
    if isinstance(languages, str) or not all(isinstance(v, str) for v in languages):
        raise InvalidInput("languages must be a list of language codes.", field="languages")
    return list(dict.fromkeys(languages))
