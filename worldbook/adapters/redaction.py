"""Cutting worldbook's own credentials out of what a server sends back.

A broken or hostile server may echo the request's headers (``Authorization: Bearer …``,
``x-api-key``) in its error text. That text goes on to a caller — the language-model adapter's
error messages, the proxy's pass-through of an upstream's error to the app (ADR 0017) — so
every adapter that hands a server's words on runs them through :func:`redact` first, with the
credentials it sent. One rule for all of them: each credential, with and without its
``Bearer`` prefix, becomes ``[redacted]``; values shorter than 8 characters are left alone
(cutting ``"x"`` out of a body would mangle it and hide nothing worth hiding).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

MARK = "[redacted]"
MIN_LENGTH = 8

Text = TypeVar("Text", str, bytes)


def secrets_of(values: Iterable[str | None]) -> tuple[str, ...]:
    """The strings to cut for these credential values (header values or bare keys), longest
    first so a whole ``Bearer <key>`` goes before its key alone would."""
    found: set[str] = set()
    for value in values:
        if not value:
            continue
        for secret in (value.strip(), value.strip().removeprefix("Bearer ").strip()):
            if len(secret) >= MIN_LENGTH:
                found.add(secret)
    return tuple(sorted(found, key=len, reverse=True))


def redact(text: Text, secrets: Iterable[str]) -> Text:
    """``text`` (a message or a raw body) with every secret replaced by ``[redacted]``; the
    same object back when none occurs (the common case costs one search a secret)."""
    for secret in secrets:
        if isinstance(text, bytes):
            needle = secret.encode()
            if needle in text:
                text = text.replace(needle, MARK.encode())
        elif secret in text:
            text = text.replace(secret, MARK)
    return text
