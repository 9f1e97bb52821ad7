"""Who may see, use and edit a book (DESIGN §5, "Sharing").

- private: only the owner sees, attaches or uses it;
- unlisted: anyone holding its (unguessable) id may view, attach and use it; only the owner edits;
- public: like unlisted, and listed in the library.
A trashed book is seen only by its owner (to restore it) and is never used in a turn.

A book the caller may not see is reported as not found, never as forbidden, so ids of other
people's private books cannot be probed.
"""

from __future__ import annotations

from worldbook.core.records import BookRecord
from worldbook.core.types import Visibility
from worldbook.errors import BookNotFound, PermissionDenied


def can_view(book: BookRecord, user_id: str) -> bool:
    if book.owner_id == user_id:
        return True
    return not book.trashed and book.visibility in (Visibility.UNLISTED, Visibility.PUBLIC)


def require_view(book: BookRecord, user_id: str) -> BookRecord:
    """The book, if ``user_id`` may see it; otherwise :class:`BookNotFound`."""
    if not can_view(book, user_id):
        raise BookNotFound.for_id(book.id)
    return book


def require_use(book: BookRecord, user_id: str) -> BookRecord:
    """The book, if ``user_id`` may attach it or use it in a turn (seen and not trashed)."""
    require_view(book, user_id)
    if book.trashed:
        raise BookNotFound(f"Book {book.id!r} is in the trash; restore it to use it.")
    return book


def require_owner(book: BookRecord, user_id: str, *, allow_trashed: bool = False) -> BookRecord:
    """The book, if ``user_id`` owns it; 404 when they cannot see it, 403 when they only see it."""
    require_view(book, user_id)
    if book.owner_id != user_id:
        raise PermissionDenied(
            f"Only the owner may change book {book.id!r}; copy it to your library to edit a copy."
        )
    if book.trashed and not allow_trashed:
        raise BookNotFound(f"Book {book.id!r} is in the trash; restore it first.")
    return book
