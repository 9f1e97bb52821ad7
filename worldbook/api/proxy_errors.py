"""Errors in the shape of the protocol the app called (ADR 0017), so its SDK raises the right
exception with worldbook's message: OpenAI ``{"error": {"message", "type", "code", "param"}}``,
Anthropic ``{"type": "error", "error": {"type", "message"}}``."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from worldbook.api.errors import status_for
from worldbook.core.proxy_messages import Protocol
from worldbook.errors import WorldbookError

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "invalid_request_error",
    413: "request_too_large",
    422: "invalid_request_error",
    429: "rate_limit_error",
    502: "api_error",
    503: "overloaded_error",
    504: "api_error",
}


def protocol_error(
    protocol: Protocol, status: int, message: str, code: str, field: str | None = None
) -> JSONResponse:
    kind = _TYPES.get(status, "api_error")
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if status in (429, 503):
        headers["Retry-After"] = "5"
    if protocol == "openai":
        if kind in ("request_too_large", "overloaded_error"):
            kind = "invalid_request_error" if status == 413 else "api_error"
        body: dict[str, object] = {
            "error": {"message": message, "type": kind, "code": code, "param": field}
        }
    else:
        body = {"type": "error", "error": {"type": kind, "message": message}}
    return JSONResponse(body, status_code=status, headers=headers)


def error_of(protocol: Protocol, exc: WorldbookError) -> JSONResponse:
    return protocol_error(protocol, status_for(exc), exc.message, exc.code, exc.field)
