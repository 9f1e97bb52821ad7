"""Book, entry, ordering, bulk, attachment and sharing use cases, with their access checks.

HTTP-free, so the API and the CLI share one implementation of every rule (DESIGN §5):
- only the owner edits a book and its entries (``require_owner``: 404 to those who may not see
  the book, 403 to those who only see it);
- an entry is reached through its book, so an entry id of someone else's private book is
  reported as not found, exactly like an id that does not exist (no IDOR);
- every write that changes an entry's embedded text (title, aliases, lore) or brings an entry
  back into use hands it to the indexer (``services.enqueue``) after the transaction committed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from worldbook.core import limits
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.ordering import Target
from worldbook.core.records import (
    AttachmentRecord,
    BookQuery,
    BookRecord,
    EntryQuery,
    EntryRecord,
    TargetKind,
)
from worldbook.core.selection import canon_budget
from worldbook.core.types import LoreBook, Visibility
from worldbook.errors import BookNotFound, EntryNotFound, InvalidInput, NotFound, PermissionDenied
from worldbook.service.access import can_view, require_owner, require_use, require_view
from worldbook.service.needs import BookEdits, EntryListing, HasBooks, LoreViews

BulkAction = Literal["enable", "disable", "delete", "move"]
MoveTo = Literal["first", "last", "before", "after"]
_CONTENT = frozenset({"title", "aliases", "lore"})


def target(to: MoveTo, anchor: str | None) -> Target:
    """The store's move target from the API's (``to``, ``anchor``) pair."""
    if to == "first" or to == "last":
        if anchor is not None:
            raise InvalidInput(
                f'anchor is only used with "before"/"after", not {to!r}.', field="anchor"
            )
        return to
    if anchor is None:
        raise InvalidInput(f'"{to}" needs an anchor entry id.', field="anchor")
    return ("before", anchor) if to == "before" else ("after", anchor)


# --- books ---------------------------------------------------------------------------------


def owned_book(
    services: HasBooks, user_id: str, book_id: str, *, trashed: bool = False
) -> BookRecord:
    return require_owner(
        services.books.get_book(book_id, include_trashed=True), user_id, allow_trashed=trashed
    )


def visible_book(services: HasBooks, user_id: str, book_id: str) -> BookRecord:
    return require_view(services.books.get_book(book_id, include_trashed=True), user_id)


def create_book(services: HasBooks, user_id: str, draft: BookDraft) -> BookRecord:
    return services.books.create_book(user_id, draft)


def update_book(
    services: HasBooks, user_id: str, book_id: str, changes: Mapping[str, Any]
) -> BookRecord:
    owned_book(services, user_id, book_id)
    return services.books.update_book(book_id, **changes)


def trash_book(services: HasBooks, user_id: str, book_id: str) -> BookRecord:
    owned_book(services, user_id, book_id)
    return services.books.trash_book(book_id)


def restore_book(services: HasBooks, user_id: str, book_id: str) -> BookRecord:
    owned_book(services, user_id, book_id, trashed=True)
    return services.books.restore_book(book_id)


def list_my_books(
    services: HasBooks,
    user_id: str,
    *,
    trashed: bool = False,
    visibility: Visibility | None = None,
    query: str | None = None,
    tag: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[BookRecord]:
    scope = BookQuery(owner_id=user_id, trashed=trashed, visibility=visibility)
    return _find_books(services, scope, query, tag, limit, offset)


def browse_library(
    services: HasBooks,
    *,
    query: str | None = None,
    tag: str | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[BookRecord]:
    """Public books only, by title substring and/or tag (DESIGN §5)."""
    scope = BookQuery(visibility=Visibility.PUBLIC)
    return _find_books(services, scope, query, tag, limit, offset)


def _find_books(
    services: HasBooks,
    scope: BookQuery,
    query: str | None,
    tag: str | None,
    limit: int,
    offset: int,
) -> list[BookRecord]:
    """One page of the books of ``scope`` whose title holds ``query`` and/or with ``tag``."""
    search = replace(
        scope,
        title_contains=_search_text(query, "q"),
        tag=_search_text(tag, "tag"),
        limit=limit,
        offset=offset,
    )
    return services.books.list_books(search)


def _search_text(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    limits.check_text(value, field=field, limit="search text", max_len=200)
    return value.strip() or None


def copy_to_library(services: BookEdits, user_id: str, book_id: str) -> BookRecord:
    """An editable private copy owned by the caller, of any live book they can see."""
    require_use(services.books.get_book(book_id, include_trashed=True), user_id)
    copy = services.books.copy_book(book_id, user_id)
    # Vectors are copied with the entries; the indexer skips those already current.
    services.enqueue([e.id for e in services.books.list_entries(copy.id, EntryQuery(enabled=True))])
    return copy


# --- entries -------------------------------------------------------------------------------


def entry_and_book(
    services: HasBooks, user_id: str, entry_id: str
) -> tuple[EntryRecord, BookRecord]:
    """The entry and its book, if the caller may see the book; otherwise EntryNotFound."""
    entry = services.books.get_entry(entry_id)
    book = services.books.get_book(entry.book_id, include_trashed=True)
    if not can_view(book, user_id):
        raise EntryNotFound.for_id(entry_id)
    return entry, book


def add_entries(
    services: BookEdits,
    user_id: str,
    book_id: str,
    drafts: Sequence[EntryDraft],
    *,
    position: Target = "last",
) -> list[EntryRecord]:
    owned_book(services, user_id, book_id)
    added = services.books.add_entries(book_id, drafts, position=position)
    services.enqueue([e.id for e in added if e.enabled])
    return added


def update_entry(
    services: BookEdits, user_id: str, entry_id: str, changes: Mapping[str, Any]
) -> EntryRecord:
    before, book = entry_and_book(services, user_id, entry_id)
    require_owner(book, user_id)
    after = services.books.update_entry(entry_id, **changes)
    if after.enabled and (after.content_hash != before.content_hash or not before.enabled):
        services.enqueue([entry_id])
    return after


def delete_entry(services: HasBooks, user_id: str, entry_id: str) -> None:
    entry, book = entry_and_book(services, user_id, entry_id)
    require_owner(book, user_id)
    services.books.delete_entries(book.id, [entry.id])


@dataclass(frozen=True, slots=True)
class EntryPage:
    """A page of a book's entries with every entry's token count and the book's canon cost."""

    book: BookRecord
    entries: list[EntryRecord]
    tokens: dict[str, int]
    usage: dict[str, Any]
    tokenizer: str
    canon_tokens: int
    canon_budget: int
    canon_heavy: bool


def list_entries(
    services: EntryListing,
    user_id: str,
    book_id: str,
    *,
    canon: bool | None = None,
    disabled: bool | None = None,
    never_used: bool | None = None,
    sort: Literal["position", "most_used"] = "position",
    limit: int | None = None,
    offset: int = 0,
    tokenizer: str | None = None,
) -> EntryPage:
    """Filters: ``canon`` (false = when relevant), ``disabled``, ``never_used``; None = all."""
    book = visible_book(services, user_id, book_id)
    if never_used is not None or sort == "most_used":
        services.usage.flush()  # read this process's own recent turns
    enabled = None if disabled is None else not disabled
    query = EntryQuery(canon, enabled, never_used, sort, limit, offset)
    entries = services.books.list_entries(book.id, query)
    counter = services.token_counter(tokenizer)
    lore = _lore_book(services, book, tokenizer)
    tokens = {e.id: e.tokens for e in lore.entries}
    canon_tokens = sum(e.tokens for e in lore.entries if e.canon and e.enabled)
    rules = services.rules
    budget = canon_budget(services.settings.default_input_window, rules)
    # Usage describes every reader's turns: only the owner sees it (as GET …/usage).
    owner = book.owner_id == user_id
    usage = services.usage_counts.entry_usage(book.id) if entries and owner else {}
    return EntryPage(
        book=book,
        entries=entries,
        tokens=tokens,
        usage=usage,
        tokenizer=counter.tokenizer_id,
        canon_tokens=canon_tokens,
        canon_budget=budget,
        canon_heavy=canon_tokens > budget * rules.canon_heavy_share,
    )


def _lore_book(services: LoreViews, book: BookRecord, tokenizer: str | None) -> LoreBook:
    """The cached core view of the book (token counts by content hash, shared with turns)."""
    services.sync_vector_index(book)
    return services.lore_books.get(
        book,
        counter=services.token_counter(tokenizer),
        model_id=services.model_id,
        indexed_entries=services.indexed_entries,
    )


def move_entries(
    services: HasBooks,
    user_id: str,
    book_id: str,
    ids: Sequence[str],
    *,
    to: MoveTo,
    anchor: str | None = None,
) -> int:
    """Move entries (keeping their relative order); returns how many were moved."""
    limits.check_bulk(len(ids))
    owned_book(services, user_id, book_id)
    services.books.move_entries(book_id, ids, to=target(to, anchor))
    return len(set(ids))


def bulk(
    services: BookEdits,
    user_id: str,
    book_id: str,
    action: BulkAction,
    ids: Sequence[str],
    *,
    to: MoveTo | None = None,
    anchor: str | None = None,
) -> int:
    """Enable, disable, delete or move ≤500 entries of one book, all or nothing.

    Returns how many entries changed (moved, deleted, switched). An id that is not an entry of this
    book refuses the whole batch with 404 (the store checks it inside the transaction).
    """
    limits.check_bulk(len(ids))
    owned_book(services, user_id, book_id)
    if action == "move":
        if to is None:
            raise InvalidInput('A move needs "to" (first, last, before, after).', field="to")
        services.books.move_entries(book_id, ids, to=target(to, anchor))
        return len(set(ids))
    if to is not None or anchor is not None:
        raise InvalidInput(f'"to"/"anchor" only apply to a move, not {action!r}.', field="to")
    if action == "delete":
        return services.books.delete_entries(book_id, ids)
    changed = services.books.set_enabled(book_id, ids, action == "enable")
    if action == "enable":
        services.enqueue(list(ids))  # the indexer skips entries whose vector is current
    return changed


# --- attachments ---------------------------------------------------------------------------


def _check_global(user_id: str, target_kind: TargetKind, target_id: str) -> None:
    if target_kind == "global" and target_id != user_id:
        raise PermissionDenied(
            "A global attachment is for your own turns: use your own user id as the target "
            "(the X-Worldbook-User you act as).",
            field="target_id",
        )


def attach(
    services: HasBooks, user_id: str, book_id: str, target_kind: TargetKind, target_id: str
) -> AttachmentRecord:
    """Attach a book the caller may use (own, or another's unlisted/public) to a target.

    Characters, stories and novels are the app's objects and their ids are shared by all the
    app's users, so an attachment belongs to the user who made it: it reaches that user's turns
    (and turns that name them as the cast's owner), never anyone else's. A ``global`` target is
    a user: only the caller themselves (their books for every turn of theirs).
    """
    _check_global(user_id, target_kind, target_id)
    require_use(services.books.get_book(book_id, include_trashed=True), user_id)
    return services.books.attach(book_id, target_kind, target_id, user_id)


def detach(
    services: HasBooks, user_id: str, book_id: str, target_kind: TargetKind, target_id: str
) -> None:
    """Remove the caller's own attachment of a book (attachments are scoped by who made them,
    so nobody can detach a book from someone else's character)."""
    visible_book(services, user_id, book_id)
    if not services.books.detach(book_id, target_kind, target_id, user_id):
        raise NotFound(
            f"book {book_id!r} is not attached to your {target_kind} {target_id!r}.",
            field="book_id",
        )


def attached_books(
    services: HasBooks, user_id: str, target_kind: TargetKind, target_id: str
) -> list[BookRecord]:
    """The books the caller attached to the target, in attachment order (books they can no
    longer see are left out)."""
    books = []
    for book_id in services.books.attachments_for(target_kind, target_id, user_id):
        try:
            books.append(visible_book(services, user_id, book_id))
        except BookNotFound:
            continue
    return books
