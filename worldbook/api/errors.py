"""The one mapping from worldbook errors to HTTP statuses, and the handlers that apply it.

Every error body has the same shape, whatever raised it — a domain error, FastAPI's request
validation, Starlette's routing (404/405), the body-size guard, or a bug::

    {"error": {"code": "limit_exceeded", "message": "...", "field": "entries[3].lore"}}

``field`` is present only when one input field is at fault. A bug is a 500 with a generic message
(the traceback goes to the log, never to the caller).
"""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from worldbook import errors as e

logger = logging.getLogger(__name__)

STATUS: dict[type[e.WorldbookError], int] = {
    # A bare WorldbookError is a bug (every raise site picks a specific type).
    e.WorldbookError: 500,
    e.InvalidInput: 422,
    e.LimitExceeded: 422,
    e.PayloadTooLarge: 413,
    e.UnsupportedFormat: 422,
    e.NotFound: 404,
    e.BookNotFound: 404,
    e.EntryNotFound: 404,
    e.WriteNotFound: 404,
    e.ApiKeyNotFound: 404,
    e.AuthenticationFailed: 401,
    e.PermissionDenied: 403,
    e.Conflict: 409,
    e.RateLimited: 429,
    e.ServiceUnavailable: 503,
    e.StorageUnavailable: 503,
    e.IndexUnavailable: 503,
    e.QueueUnavailable: 503,
    e.LLMNotConfigured: 503,
    e.LLMUnavailable: 503,
    # The model is worldbook's upstream: its failures are gateway errors, not the caller's.
    e.LanguageModelError: 502,
    e.LLMAuthFailed: 502,
    e.LLMRateLimited: 429,
    e.LLMTimeout: 504,
    e.LLMContextTooLong: 422,
    e.LLMTruncated: 502,
    e.LLMBadReply: 502,
}
"""Every class of :func:`worldbook.errors.all_error_types` — a test checks none is missing."""

_HTTP_CODES = {
    400: "bad_request",
    401: "authentication_failed",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_input",
    429: "rate_limited",
}


def status_for(error: e.WorldbookError) -> int:
    """The status of an error: its own class's, else the nearest mapped ancestor's."""
    for cls in type(error).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def error_body(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        body["field"] = field
    return {"error": body}


def error_response(
    status: int, code: str, message: str, field: str | None = None, **headers: str
) -> JSONResponse:
    return JSONResponse(error_body(code, message, field), status_code=status, headers=headers)


def _field_of(loc: tuple[int | str, ...]) -> str:
    """``("body", "entries", 3, "title")`` → ``entries[3].title``; the source leads for headers
    and query parameters (``query.limit``) so the caller knows where to look."""
    parts = list(loc)
    if parts and parts[0] == "body":
        parts = parts[1:]
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "body"


async def _worldbook_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, e.WorldbookError)
    status = status_for(exc)
    headers: dict[str, str] = {}
    retry_after = getattr(exc, "retry_after", None)
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    elif isinstance(exc, e.RateLimited):
        headers["Retry-After"] = str(exc.retry_after_s)
    elif status in (429, 503):
        headers["Retry-After"] = str(max(1, math.ceil(retry_after))) if retry_after else "5"
    if status >= 500:
        # A language model's error message may quote what its server sent back (our prompt,
        # so lore); the log names the error, the caller gets the message (ADR 0018).
        quoted = isinstance(exc, e.LanguageModelError | e.LLMUnavailable)
        said = (
            f"{exc.code} (message not logged: it may quote the model server)"
            if quoted
            else exc.message
        )
        logger.error("%s: %s", type(exc).__name__, said, exc_info=status == 500)
    return error_response(status, exc.code, exc.message, exc.field, **headers)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = list(exc.errors())
    if not problems:
        return error_response(422, "invalid_input", "The request is not valid.")
    first = problems[0]
    field = _field_of(tuple(first.get("loc", ())))
    kind = first.get("type", "")
    if kind == "extra_forbidden":
        message = f"Unknown field {field!r}; remove it (see /docs for the accepted fields)."
    elif kind == "json_invalid":
        message = "The body is not valid JSON."
        field = "body"
    else:
        message = f"{field}: {first.get('msg', 'invalid value')}."
    if len(problems) > 1:
        message += f" ({len(problems) - 1} more problem(s) in this request.)"
    return error_response(422, "invalid_input", message, field)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else "Request failed."
    if exc.status_code == 404 and message == "Not Found":
        message = "No such route; see /docs for the API."
    if exc.status_code == 405:
        message = "This method is not allowed on this route; see /docs for the API."
    for protocol in ("openai", "anthropic"):  # the proxy's routes answer in their protocol's
        if request.url.path.startswith(f"/{protocol}/"):  # shape (ADR 0017)
            from worldbook.api.proxy_errors import protocol_error

            return protocol_error(protocol, exc.status_code, message, code)
    return error_response(exc.status_code, code, message, **dict(exc.headers or {}))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error", exc_info=exc)
    # This handler answers outside the request-id middleware: it puts the id on itself.
    request_id = request.scope.get("worldbook.request_id")
    headers = {"X-Request-Id": request_id} if isinstance(request_id, str) else {}
    return error_response(500, "internal_error", "Internal error; it has been logged.", **headers)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(e.WorldbookError, _worldbook_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
