"""Logs that can be followed (ADR 0018): a request id on every line, text or JSON lines.

The request id lives in a context variable: the HTTP middleware sets it for a request (taken
from ``X-Request-Id`` when it is a sane token, else made), the Celery queue sends it with the
tasks the request queues, and the worker sets it again while it runs them. A logging filter
copies it onto every record, so any ``logger.warning`` anywhere carries it.

JSON lines come from the standard library (:class:`JsonFormatter`), not structlog: every module
already logs through stdlib ``logging``, third-party loggers (uvicorn, Celery, SQLAlchemy) must
come out in the same format, and one formatter plus one filter do that with no new dependency
and no second logging API to learn.

What is logged is ids, counts, routes and times. Never lore, message text or keys: the access
line names the route *template*, the acting user and the book ids, nothing from a body.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]

request_id_var: ContextVar[str | None] = ContextVar("worldbook_request_id", default=None)
books_var: ContextVar[list[str] | None] = ContextVar("worldbook_request_books", default=None)

_SANE_ID = re.compile(r"[A-Za-z0-9._:/+=-]{1,128}")
# Fields a record may carry through ``extra=`` that the JSON line includes.
ACCESS_FIELDS = ("method", "route", "status", "ms", "user_id", "book_ids")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


def request_id_from(header: str | None) -> str:
    """The caller's request id when it is a sane token (letters, digits, ``._:/+=-``, at most
    128), else a new one: a header is never copied into logs unchecked."""
    if header and _SANE_ID.fullmatch(header):
        return header
    return secrets.token_hex(8)


def current_request_id() -> str | None:
    return request_id_var.get()


def note_books(book_ids: list[str]) -> None:
    """Name the books of the current request for its access line (no-op outside a request)."""
    books = books_var.get()
    if books is not None:
        books.extend(b for b in book_ids if b not in books)


class RequestIdFilter(logging.Filter):
    """Puts the current request id (``-`` outside a request) on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = request_id_var.get() or "-"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id, access fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
        }
        for name in ACCESS_FIELDS:
            if hasattr(record, name):
                line[name] = getattr(record, name)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


_HANDLER_NAME = "worldbook"


def configure_logging(log_format: LogFormat = "text", level: int = logging.INFO) -> None:
    """Send the root logger's records to stderr in ``log_format``, each with its request id.

    Idempotent: a second call replaces worldbook's handler, never adds one.
    """
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    root.addHandler(handler)
    root.setLevel(level)
    # uvicorn's and Celery's loggers propagate to the root, through this handler.
    for name in ("uvicorn", "uvicorn.error", "celery"):
        logging.getLogger(name).handlers.clear()
        logging.getLogger(name).propagate = True
