"""The worldbook error hierarchy: one meaning per type, messages that say what to do.

Every error a caller can see is a :class:`WorldbookError`. Foreign errors (SQLAlchemy, FAISS,
redis, torch, JSON decoding) are translated into one of these exactly once, in the adapter that
met them, with ``raise ... from exc``. The HTTP layer maps each type to one status code
(``worldbook.api.errors``) and the CLI maps each type to one exit message (``worldbook.cli``)::

    WorldbookError                     base; ``code`` is a stable machine-readable string
    ├── InvalidInput                   a field has a wrong value (422)
    │   ├── LimitExceeded              a DESIGN §6 limit is exceeded (422)
    │   │   └── PayloadTooLarge        a body or file is bigger than we read (413)
    │   └── UnsupportedFormat          a file is in no format we read (422)
    ├── NotFound                       no such object, or the caller may not see it (404)
    │   ├── BookNotFound
    │   ├── EntryNotFound
    │   ├── WriteNotFound              a living-world write (ADR 0006)
    │   └── ApiKeyNotFound
    ├── AuthenticationFailed           missing, unknown or revoked API key (401)
    ├── PermissionDenied               the caller sees the object but may not do this (403)
    ├── Conflict                       the request clashes with current state (409)
    ├── RateLimited                    too much at once; retry after ``retry_after_s`` (429)
    ├── ServiceUnavailable             a backing service is down (503)
    │   ├── StorageUnavailable         the database
    │   ├── IndexUnavailable           the vector index or the embedding model
    │   ├── QueueUnavailable           the indexing broker
    │   ├── LLMNotConfigured           no language model is configured (WORLDBOOK_LLM_URL)
    │   └── LLMUnavailable             the language model server is down or overloaded
    └── LanguageModelError             the language model failed us (502)
        ├── LLMAuthFailed              it refused worldbook's credentials (502)
        ├── LLMRateLimited             it rate-limited worldbook (429, its Retry-After passed on)
        ├── LLMTimeout                 it did not answer in time (504)
        ├── LLMContextTooLong          the request does not fit its context window (422)
        ├── LLMTruncated               its reply was cut at the output-token limit (502)
        └── LLMBadReply                its reply stayed unusable after one repair round (502)

The language-model errors carry ``retry_after`` (seconds, or None) so the HTTP layer can pass a
``Retry-After`` header on; :data:`LLM_FAILURES` catches every failure of a model call.
"""

from __future__ import annotations


class WorldbookError(Exception):
    """Base of every error worldbook raises on purpose.

    Args:
        message: what went wrong and what to do about it, for a human.
        field: the input field at fault, when there is one (``"entries[3].title"``).
    """

    code = "worldbook_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidInput(WorldbookError):
    """A value is malformed or out of its allowed range."""

    code = "invalid_input"


class LimitExceeded(InvalidInput):
    """A DESIGN §6 limit was exceeded; nothing was written.

    Args:
        limit: the limit's name as documented (``"entry lore"``).
        allowed: the limit in words (``"20–20,000 characters"``).
        actual: what was sent (``"20,001 characters"``).
    """

    code = "limit_exceeded"

    def __init__(
        self, *, limit: str, allowed: str, actual: str, field: str | None = None, hint: str = ""
    ) -> None:
        message = f"{limit} must be {allowed}; got {actual}."
        if hint:
            message += f" {hint}"
        super().__init__(message, field=field)
        self.limit = limit
        self.allowed = allowed
        self.actual = actual


class PayloadTooLarge(LimitExceeded):
    """A request body or uploaded file is larger than worldbook reads."""

    code = "payload_too_large"


class UnsupportedFormat(InvalidInput):
    """A file is in no format worldbook reads (the message lists the ones it does)."""

    code = "unsupported_format"


class NotFound(WorldbookError):
    """No such object, or one the acting user may not see (never reveal which)."""

    code = "not_found"


class BookNotFound(NotFound):
    code = "book_not_found"

    @classmethod
    def for_id(cls, book_id: str) -> BookNotFound:
        """The one answer for a book that does not exist *or* that the caller may not see:
        byte-identical either way, so ids cannot be probed (DESIGN §5)."""
        return cls(f"book {book_id!r} does not exist.", field="book_id")


class EntryNotFound(NotFound):
    code = "entry_not_found"

    @classmethod
    def for_id(cls, entry_id: str, *, field: str = "entry_id") -> EntryNotFound:
        """The one answer for an entry that does not exist or is in a book the caller may not
        see (or, for a lookup, may not use)."""
        return cls(f"entry {entry_id!r} does not exist.", field=field)


class WriteNotFound(NotFound):
    code = "write_not_found"

    @classmethod
    def for_id(cls, write_id: str) -> WriteNotFound:
        """The one answer for a write that does not exist or is in a book the caller may not
        see."""
        return cls(f"write {write_id!r} does not exist.", field="write_id")


class ApiKeyNotFound(NotFound):
    code = "api_key_not_found"


class AuthenticationFailed(WorldbookError):
    """The API key is missing, unknown or revoked, or no acting user was named."""

    code = "authentication_failed"


class PermissionDenied(WorldbookError):
    """The acting user can see the object but may not do this to it."""

    code = "permission_denied"


class Conflict(WorldbookError):
    """The request clashes with the current state (e.g. a concurrent change)."""

    code = "conflict"


class RateLimited(WorldbookError):
    """A limit on how much may be asked per unit of time (or at once) was reached; nothing
    was done. ``retry_after_s`` says when trying again can succeed."""

    code = "rate_limited"

    def __init__(self, message: str, *, retry_after_s: int = 1, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.retry_after_s = max(1, int(retry_after_s))


class ServiceUnavailable(WorldbookError):
    """A backing service is down; retrying later may succeed."""

    code = "service_unavailable"


class StorageUnavailable(ServiceUnavailable):
    code = "storage_unavailable"


class IndexUnavailable(ServiceUnavailable):
    code = "index_unavailable"


class QueueUnavailable(ServiceUnavailable):
    code = "queue_unavailable"


class LLMNotConfigured(ServiceUnavailable):
    """AI authoring was asked for but no language model is configured."""

    code = "llm_not_configured"


class _RetryAfterHint(WorldbookError):
    """A language-model failure that carries the server's ``retry_after`` hint (seconds, or
    None). Shared by two branches of the tree, never raised itself."""

    def __init__(
        self, message: str, *, field: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, field=field)
        self.retry_after = retry_after


class LanguageModelError(_RetryAfterHint):
    """The configured language model failed; ``retry_after`` is its hint in seconds, if any."""

    code = "llm_error"


class LLMUnavailable(ServiceUnavailable, _RetryAfterHint):
    """The language model server cannot be reached, or answered with a 5xx / overloaded."""

    code = "llm_unavailable"


class LLMAuthFailed(LanguageModelError):
    """The language model server refused worldbook's credentials (its 401/403)."""

    code = "llm_auth_failed"


class LLMRateLimited(LanguageModelError):
    """The language model server rate-limited worldbook (its 429)."""

    code = "llm_rate_limited"


class LLMTimeout(LanguageModelError):
    """The language model did not answer within ``WORLDBOOK_LLM_TIMEOUT_S``."""

    code = "llm_timeout"


class LLMContextTooLong(LanguageModelError):
    """The prompt does not fit the model's context window."""

    code = "llm_context_too_long"


class LLMTruncated(LanguageModelError):
    """The reply stopped at the output-token limit; ``partial`` is what arrived."""

    code = "llm_truncated"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        retry_after: float | None = None,
        partial: str = "",
    ) -> None:
        super().__init__(message, field=field, retry_after=retry_after)
        self.partial = partial


class LLMBadReply(LanguageModelError):
    """The model's reply is unusable (not JSON, or too little valid) even after a repair."""

    code = "llm_bad_reply"


LLM_FAILURES: tuple[type[WorldbookError], ...] = (LanguageModelError, LLMUnavailable)
"""Every way a language-model call can fail (for callers that fall back on something else)."""


def all_error_types() -> list[type[WorldbookError]]:
    """Every error class in the hierarchy (for the mapping-completeness tests); private
    shared bases such as ``_RetryAfterHint`` are never raised, so they are left out."""
    found: set[type[WorldbookError]] = set()
    pending: list[type[WorldbookError]] = [WorldbookError]
    while pending:
        cls = pending.pop()
        if not cls.__name__.startswith("_"):
            found.add(cls)
        pending.extend(cls.__subclasses__())
    return sorted(found, key=lambda c: c.__name__)
