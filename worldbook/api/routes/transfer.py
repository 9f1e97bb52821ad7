"""Import (multipart upload or raw body; ≤500 entries a request) and export."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response, status
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from worldbook.api.deps import CallerDep, ServicesDep
from worldbook.api.routes.books import BookId
from worldbook.api.schemas import ImportOut
from worldbook.core.types import BookMode
from worldbook.errors import InvalidInput, PayloadTooLarge
from worldbook.service import importing

router = APIRouter(tags=["import and export"])

_UPLOAD_DOC = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "properties": {"file": {"type": "string", "format": "binary"}},
                    "required": ["file"],
                }
            },
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            "application/json": {"schema": {}},
        },
    }
}


async def _read_upload(request: Request, max_bytes: int) -> tuple[bytes, str | None]:
    """The file's bytes and name, from a multipart ``file`` field or the raw body."""
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_files=1, max_fields=8)
        try:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise InvalidInput(
                    "Send the lorebook in a multipart field named 'file'.", field="file"
                )
            data = await upload.read(max_bytes + 1)
            name = upload.filename
        finally:
            await form.close()
    else:
        data = await request.body()
        name = None
    if len(data) > max_bytes:
        raise PayloadTooLarge(
            limit="upload size",
            allowed=f"at most {max_bytes:,} bytes",
            actual=f"more than {max_bytes:,} bytes",
            field="file",
        )
    if not data:
        raise InvalidInput("The upload is empty; send a lorebook file.", field="file")
    return data, name


@router.post("/books/import", status_code=status.HTTP_201_CREATED, openapi_extra=_UPLOAD_DOC)
async def import_book(
    request: Request,
    caller: CallerDep,
    services: ServicesDep,
    mode: BookMode = BookMode.WORLD,
    filename: Annotated[str | None, Query(max_length=255, description="Name hint.")] = None,
) -> ImportOut:
    """Import a lorebook in any supported format as a new book (at most 500 entries per
    request; larger books: ``worldbook import``). Entries are indexed in the background."""
    data, name = await _read_upload(request, services.settings.max_upload_bytes)
    result = await run_in_threadpool(
        importing.import_book,
        services,
        owner_id=caller.user_id,
        data=data,
        mode=mode,
        filename=filename or name,
        single_batch=True,
    )
    return ImportOut.model_validate(result.to_json())


@router.get(
    "/books/{book_id}/export",
    response_class=Response,
    responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
)
def export_book(
    book_id: BookId,
    caller: CallerDep,
    services: ServicesDep,
    format: Literal["sillytavern", "ccv3"] = "sillytavern",
) -> Response:
    """A book the caller can see, as SillyTavern World Info JSON or a CCv3 lorebook."""
    data = importing.export(services, user_id=caller.user_id, book_id=book_id, fmt=format)
    return Response(
        content=data,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{book_id}.{format}.json"'},
    )
