"""Where a turn's books come from: explicit ids and a cast (story, novel, characters), resolved
in DESIGN §2 rule 2 order with the access rules applied."""

from __future__ import annotations

from worldbook.core.records import BookRecord, TargetKind
from worldbook.core.turn_request import BookSource, CastMember
from worldbook.errors import InvalidInput, WorldbookError
from worldbook.service.access import require_use
from worldbook.service.needs import HasBooks

__all__ = ["BookSource", "CastMember", "resolve_books"]


def resolve_books(
    services: HasBooks, user_id: str, source: BookSource
) -> tuple[list[tuple[BookRecord, str | None]], list[str]]:
    """The turn's books in DESIGN §2 rule 2 order with the character each came from: explicit
    ids, story, novel, each character's, then the acting user's global books (attached with
    target kind ``global`` for themselves: in every turn of theirs, after everything else).

    Explicit ids the user may not use raise (404); attached books the user may no longer use
    (made private, trashed) are skipped with a note — the cast is the app's data, not an error.
    """
    if source.is_empty():
        raise InvalidInput(
            "A turn needs books: give book_ids, or a cast (story_id, novel_id, characters).",
            field="books",
        )
    wanted: list[tuple[str, str | None, bool]] = [(b, None, True) for b in source.book_ids]
    owners: tuple[tuple[TargetKind, str | None], ...] = (
        ("story", source.story_id),
        ("novel", source.novel_id),
    )
    owner = source.owner or user_id
    for kind, target in owners:
        if target:
            ids = services.books.attachments_for(kind, target, owner)
            wanted += [(b, None, False) for b in ids]
    for member in source.characters:
        label = member.name or member.character_id
        ids = services.books.attachments_for(
            "character", member.character_id, member.owner or owner
        )
        wanted += [(b, label, False) for b in ids]
    wanted += [(b, None, False) for b in services.books.attachments_for("global", user_id, user_id)]

    books: list[tuple[BookRecord, str | None]] = []
    notes: list[str] = []
    for book_id, character, explicit in wanted:
        try:
            book = require_use(services.books.get_book(book_id, include_trashed=True), user_id)
        except WorldbookError:
            if explicit:
                raise
            # No id: the book may be someone else's private book (ids must not leak).
            notes.append("An attached book was skipped: it is not available to you.")
            continue
        books.append((book, character))
    return books, notes
