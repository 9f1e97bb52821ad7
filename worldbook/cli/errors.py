"""The one mapping from worldbook errors to CLI exit codes and messages."""

from __future__ import annotations

from worldbook.errors import (
    AuthenticationFailed,
    Conflict,
    InvalidInput,
    LanguageModelError,
    NotFound,
    PermissionDenied,
    RateLimited,
    ServiceUnavailable,
    WorldbookError,
)

EXIT_CODES: dict[type[WorldbookError], int] = {
    WorldbookError: 1,
    InvalidInput: 2,
    NotFound: 3,
    AuthenticationFailed: 4,
    PermissionDenied: 4,
    Conflict: 5,
    ServiceUnavailable: 6,
    RateLimited: 7,
    LanguageModelError: 8,
}
"""Exit code per error family; a subclass takes its nearest listed ancestor's code."""


def exit_code(error: WorldbookError) -> int:
    for cls in type(error).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return 1


def cli_message(error: WorldbookError) -> str:
    """``error [code] (field): message`` — one line a person can act on."""
    where = f" ({error.field})" if error.field else ""
    return f"error [{error.code}]{where}: {error.message}"
