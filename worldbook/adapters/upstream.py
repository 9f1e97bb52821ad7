"""The proxy's upstream calls (ADR 0017): one pooled ``httpx.AsyncClient`` per event loop,
requests in the upstream's own protocol, answers handed back as they come.

Transport failures become worldbook errors the routes shape for the calling protocol: no
answer in time is ``LLMTimeout`` (504), no connection ``LanguageModelError`` (502). An
upstream's own HTTP errors are not errors here: their status and body pass through — with the
connection's upstream key cut out (:mod:`worldbook.adapters.redaction`), as is every error
event of a stream, since an upstream may echo the request's headers and the app must never
receive the key (docs/design/proxy.md, Errors).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from worldbook.adapters.redaction import redact, secrets_of
from worldbook.errors import LanguageModelError, LLMTimeout

Kind = Literal["openai", "anthropic"]
_PATHS = {"openai": "/chat/completions", "anthropic": "/messages"}
_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True, slots=True)
class Upstream:
    """Where one connection's calls go, with its key and timeouts."""

    kind: Kind
    base_url: str
    api_key: str | None
    timeout_s: float
    connect_timeout_s: float

    def url(self) -> str:
        return self.base_url.rstrip("/") + _PATHS[self.kind]

    def headers(self, passed: dict[str, str]) -> dict[str, str]:
        """Auth in the upstream's form, plus the app's protocol headers worth keeping."""
        headers = {"content-type": "application/json", **passed}
        if self.api_key:
            if self.kind == "anthropic":
                headers["x-api-key"] = self.api_key
            else:
                headers["authorization"] = f"Bearer {self.api_key}"
        if self.kind == "anthropic":
            headers.setdefault("anthropic-version", "2023-06-01")
        return headers

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_s, connect=self.connect_timeout_s)

    def secrets(self) -> tuple[str, ...]:
        """What must not leave in an answer: the key, as sent in either header form."""
        return secrets_of([self.api_key])


def client() -> httpx.AsyncClient:
    """The running loop's pooled client (a pooled connection cannot cross event loops)."""
    loop = asyncio.get_running_loop()
    found = _clients.get(loop)
    if found is None:
        found = httpx.AsyncClient(limits=httpx.Limits(max_connections=256))
        _clients[loop] = found
    return found


def _failure(upstream: Upstream, exc: httpx.TransportError) -> Exception:
    where = upstream.base_url
    if isinstance(exc, httpx.TimeoutException):
        return LLMTimeout(
            f"The upstream model at {where} did not answer within {upstream.timeout_s:g} s "
            "(WORLDBOOK_PROXY_TIMEOUT_S); try again or raise the timeout."
        )
    return LanguageModelError(
        f"The upstream model at {where} could not be reached ({type(exc).__name__}); check "
        "that it is running and that the connection's upstream_url is right."
    )


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes
    content_type: str


def _answer(upstream: Upstream, response: httpx.Response) -> Answer:
    """The response as the routes pass it on; a failure's body without the key."""
    kind = response.headers.get("content-type", "application/json")
    body = response.content
    if response.status_code >= 300:
        body = redact(body, upstream.secrets())
    return Answer(response.status_code, body, kind)


def _error_line(line: str) -> bool:
    """An SSE data line that may carry an error: OpenAI's (and llama.cpp's, vLLM's)
    ``{"error": …}`` / ``"object": "error"``, Anthropic's ``{"type": "error", "error": …}``.
    A text chunk that merely says "error" is redacted too, which changes nothing in it."""
    return '"error"' in line


async def call(upstream: Upstream, body: dict[str, Any], passed: dict[str, str]) -> Answer:
    """One non-streaming call."""
    try:
        response = await client().post(
            upstream.url(), json=body, headers=upstream.headers(passed), timeout=upstream.timeout()
        )
    except httpx.TransportError as exc:
        raise _failure(upstream, exc) from None
    return _answer(upstream, response)


class Stream:
    """One streaming call: its status, then its lines as they arrive; closing it (the app
    went away) closes the upstream connection and so stops the upstream's work."""

    def __init__(self, upstream: Upstream, body: dict[str, Any], passed: dict[str, str]) -> None:
        self._upstream = upstream
        self._body = body
        self._passed = passed
        self._response: httpx.Response | None = None

    async def open(self) -> int:
        request = client().build_request(
            "POST",
            self._upstream.url(),
            json=self._body,
            headers=self._upstream.headers(self._passed),
            timeout=self._upstream.timeout(),
        )
        try:
            self._response = await client().send(request, stream=True)
        except httpx.TransportError as exc:
            raise _failure(self._upstream, exc) from None
        return self._response.status_code

    async def read_all(self) -> bytes:
        """The whole body of a failed call (its status was an error), without the key."""
        assert self._response is not None
        try:
            return redact(await self._response.aread(), self._upstream.secrets())
        except httpx.TransportError as exc:
            raise _failure(self._upstream, exc) from None
        finally:
            await self.close()

    async def lines(self) -> AsyncIterator[str]:
        assert self._response is not None
        secrets = self._upstream.secrets()
        try:
            async for line in self._response.aiter_lines():
                yield redact(line, secrets) if _error_line(line) else line
        except httpx.TransportError as exc:
            raise _failure(self._upstream, exc) from None

    async def close(self) -> None:
        if self._response is not None:
            await self._response.aclose()


async def list_models(upstream: Upstream, params: dict[str, str] | None = None) -> Answer:
    """The upstream's ``GET /models`` (both protocols serve it), passed through."""
    url = upstream.base_url.rstrip("/") + "/models"
    try:
        response = await client().get(
            url, params=params, headers=upstream.headers({}), timeout=upstream.timeout()
        )
    except httpx.TransportError as exc:
        raise _failure(upstream, exc) from None
    return _answer(upstream, response)


async def close_client() -> None:
    """Close the running loop's pooled client (the app's shutdown)."""
    found = _clients.pop(asyncio.get_running_loop(), None)
    if found is not None:
        await found.aclose()
