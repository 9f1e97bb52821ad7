"""Connections of the proxy (ADR 0017): what an app pasting one token gets — whose books, which
upstream model, which budgets.

A connection token is ``wbc_`` and 43 random URL-safe characters: its own prefix, so it is never
taken for an API key (``wb_``) and an API key never opens a connection. Only its sha256 is
stored, with its first twelve characters in clear (lists, finding the row). The upstream key is
stored sealed (:mod:`worldbook.adapters.secrets`) and is no field of the record: a record can be
listed, logged and returned without it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal
from urllib.parse import urlsplit

from worldbook.errors import InvalidInput

CONNECTION_PREFIX = "wbc_"
_SHOWN = 12
UpstreamKind = Literal["openai", "anthropic"]
UPSTREAM_KINDS: tuple[UpstreamKind, ...] = ("openai", "anthropic")
MAX_NAME = 200
MAX_URL = 2000


def new_connection_token() -> tuple[str, str]:
    """A new token (shown once) and its prefix (kept in clear)."""
    plaintext = CONNECTION_PREFIX + secrets.token_urlsafe(32)
    return plaintext, plaintext[:_SHOWN]


def connection_token_prefix(presented: object) -> str | None:
    """The prefix of a presented token, or None when it does not have the form of one."""
    if not isinstance(presented, str) or not presented.startswith(CONNECTION_PREFIX):
        return None
    return presented[:_SHOWN]


@dataclass(frozen=True, slots=True)
class ConnectionSpec:
    """What a person fills in once: the books (ids, or a story / character whose attachments
    apply, with the names for ``{{char}}`` / ``{{user}}``), the upstream and the model profile."""

    name: str
    upstream_kind: UpstreamKind
    upstream_url: str
    upstream_model: str | None = None
    book_ids: tuple[str, ...] = ()
    story_id: str | None = None
    character_id: str | None = None
    char_name: str | None = None
    user_name: str | None = None
    input_window: int = 8192
    tokenizer: str = "cl100k_base"
    supports_tools: bool | None = None  # None: the model takes tools when the app sends some


@dataclass(frozen=True, slots=True)
class ConnectionRecord:
    """A stored connection, never with its token or upstream key."""

    id: str
    owner_id: str
    prefix: str
    spec: ConnectionSpec
    has_upstream_key: bool
    created_at: datetime
    revoked_at: datetime | None = None


def upstream_host(url: str) -> str:
    """The host of an upstream URL (lower case), for the operator's allow list."""
    return (urlsplit(url).hostname or "").lower()


def check_spec(spec: ConnectionSpec, allowed_hosts: tuple[str, ...]) -> ConnectionSpec:
    """A spec's fields within their limits, its URL http(s) with a host, and that host among
    ``allowed_hosts`` when the operator named any (empty: every host is allowed)."""
    if not spec.name.strip() or len(spec.name) > MAX_NAME:
        raise InvalidInput(f"name must be 1–{MAX_NAME} characters.", field="name")
    if spec.upstream_kind not in UPSTREAM_KINDS:
        raise InvalidInput("upstream_kind must be 'openai' or 'anthropic'.", field="upstream_kind")
    url = spec.upstream_url.strip().rstrip("/")
    parts = urlsplit(url)
    if len(url) > MAX_URL or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(
            "upstream_url must be an http(s) URL with a host, such as "
            "https://api.openai.com/v1 or http://127.0.0.1:8080/v1.",
            field="upstream_url",
        )
    host = upstream_host(url)
    if allowed_hosts and host not in allowed_hosts:
        raise InvalidInput(
            f"upstream host {host!r} is not allowed on this server; allowed: "
            f"{', '.join(allowed_hosts)} (WORLDBOOK_PROXY_ALLOWED_UPSTREAMS).",
            field="upstream_url",
        )
    if not spec.book_ids and spec.story_id is None and spec.character_id is None:
        raise InvalidInput(
            "A connection needs books: give book_ids, a story_id or a character_id.",
            field="book_ids",
        )
    if spec.input_window < 512:
        raise InvalidInput("input_window must be at least 512 tokens.", field="input_window")
    return replace(spec, upstream_url=url)


def spec_to_json(spec: ConnectionSpec) -> dict[str, object]:
    """The stored form of a spec (one JSON column: new fields need no migration)."""
    return {
        "name": spec.name,
        "upstream_kind": spec.upstream_kind,
        "upstream_url": spec.upstream_url,
        "upstream_model": spec.upstream_model,
        "book_ids": list(spec.book_ids),
        "story_id": spec.story_id,
        "character_id": spec.character_id,
        "char_name": spec.char_name,
        "user_name": spec.user_name,
        "input_window": spec.input_window,
        "tokenizer": spec.tokenizer,
        "supports_tools": spec.supports_tools,
    }


def spec_from_json(data: dict[str, object]) -> ConnectionSpec:
    values = dict(data)
    ids = values.get("book_ids")
    values["book_ids"] = tuple(ids) if isinstance(ids, list) else ()
    return ConnectionSpec(**values)  # type: ignore[arg-type]
