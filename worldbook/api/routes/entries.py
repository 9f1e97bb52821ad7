"""Entries: create one or many, read, update, delete, list; list order and bulk actions."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response, status

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId
from worldbook.api.schemas import (
    ID_PATTERN,
    BulkRequest,
    BulkResult,
    EntriesCreate,
    EntryFields,
    EntryList,
    EntryOut,
    EntryPatch,
    EntryUsageOut,
    MoveRequest,
    MoveResult,
)
from worldbook.core.drafts import EntryDraft
from worldbook.service import library

router = APIRouter(tags=["entries"])

EntryId = Annotated[str, Path(pattern=ID_PATTERN, description="The entry's id.")]


def _draft(fields: EntryFields) -> EntryDraft:
    values = fields.model_dump()
    if values["selective"] is None:
        # Secondary keys sent through the API are meant to apply (importers keep the file's
        # own flag instead; SillyTavern's new entries are selective too).
        values["selective"] = bool(values["secondary_keys"])
    return EntryDraft(**values)


@router.post("/books/{book_id}/entries", status_code=status.HTTP_201_CREATED)
def create_entry(
    book_id: BookId, body: EntryFields, caller: CallerDep, services: ServicesDep
) -> EntryOut:
    """Add one entry at the end of the book's list; it is indexed in the background."""
    added = library.add_entries(services, caller.user_id, book_id, [_draft(body)])
    return EntryOut.of(added[0])


@router.post("/books/{book_id}/entries/batch", status_code=status.HTTP_201_CREATED)
def create_entries(
    book_id: BookId, body: EntriesCreate, caller: CallerDep, services: ServicesDep
) -> list[EntryOut]:
    """Add up to 500 entries in one transaction, in order, at ``position``."""
    where = library.target(body.position.to, body.position.anchor)
    drafts = [_draft(e) for e in body.entries]
    added = library.add_entries(services, caller.user_id, book_id, drafts, position=where)
    return [EntryOut.of(e) for e in added]


@router.get("/books/{book_id}/entries")
def list_entries(
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
    canon: Annotated[bool | None, Query(description="true: canon; false: when relevant")] = None,
    disabled: Annotated[bool | None, Query(description="true: only disabled")] = None,
    never_used: Annotated[bool | None, Query(description="true: never reached a model")] = None,
    sort: Literal["position", "most_used"] = "position",
    limit: Annotated[int | None, Query(ge=1, le=2000)] = None,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    tokenizer: Annotated[str | None, Query(max_length=500)] = None,
) -> EntryList:
    """A book's entries with each one's token count and the book's canon cost."""
    page = library.list_entries(
        services,
        caller.user_id,
        book_id,
        canon=canon,
        disabled=disabled,
        never_used=never_used,
        sort=sort,
        limit=limit,
        offset=offset,
        tokenizer=tokenizer,
    )
    entries = []
    for entry in page.entries:
        used = page.usage.get(entry.id)
        usage = None if used is None else EntryUsageOut.model_validate(used, from_attributes=True)
        entries.append(EntryOut.of(entry, tokens=page.tokens.get(entry.id), usage=usage))
    return EntryList(
        book_id=page.book.id,
        entries=entries,
        tokenizer=page.tokenizer,
        canon_tokens=page.canon_tokens,
        canon_budget=page.canon_budget,
        canon_heavy=page.canon_heavy,
        limit=limit,
        offset=offset,
    )


@router.get("/entries/{entry_id}")
def get_entry(entry_id: EntryId, caller: CallerDep, services: ServicesDep) -> EntryOut:
    """An entry of a book the caller can see."""
    entry, _ = library.entry_and_book(services, caller.user_id, entry_id)
    return EntryOut.of(entry)


@router.patch("/entries/{entry_id}")
def update_entry(
    entry_id: EntryId, body: EntryPatch, caller: CallerDep, services: ServicesDep
) -> EntryOut:
    """Change the fields sent; owner only. A new text is re-indexed in the background."""
    changes = body.changes()
    return EntryOut.of(library.update_entry(services, caller.user_id, entry_id, changes))


@router.delete("/entries/{entry_id}", status_code=status.HTTP_204_NO_CONTENT)
def delete_entry(entry_id: EntryId, caller: CallerDep, services: ServicesDep) -> Response:
    """Delete an entry for good; owner only."""
    library.delete_entry(services, caller.user_id, entry_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/books/{book_id}/entries/move")
def move_entries(
    book_id: BookId, body: MoveRequest, caller: CallerDep, services: ServicesDep
) -> MoveResult:
    """Move entries first / last / before or after ``anchor``, keeping their relative order."""
    moved = library.move_entries(
        services, caller.user_id, book_id, body.ids, to=body.to, anchor=body.anchor
    )
    return MoveResult(moved=moved)


@router.post("/books/{book_id}/entries/bulk")
def bulk_action(
    book_id: BookId, body: BulkRequest, caller: CallerDep, services: ServicesDep
) -> BulkResult:
    """Enable, disable, delete or move up to 500 entries, all or nothing."""
    changed = library.bulk(
        services, caller.user_id, book_id, body.action, body.ids, to=body.to, anchor=body.anchor
    )
    return BulkResult(action=body.action, changed=changed)
