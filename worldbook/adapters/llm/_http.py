"""What both HTTP adapters share: bounded retries, Retry-After, and error translation.

Status meanings follow the providers' documented error tables (OpenAI's and Anthropic's
``/v1/messages`` errors: 400 invalid_request_error, 401 authentication_error, 403
permission_error, 413 request_too_large, 429 rate_limit_error, 500 api_error, 529
overloaded_error) and llama.cpp's server (400 ``exceed_context_size_error``). Every failure
leaves as a :mod:`worldbook.errors` type; the API key never appears in a message.
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import urlsplit

import httpx

from worldbook.adapters.redaction import redact, secrets_of
from worldbook.errors import (
    LanguageModelError,
    LLMAuthFailed,
    LLMContextTooLong,
    LLMRateLimited,
    LLMTimeout,
    LLMTruncated,
    LLMUnavailable,
    WorldbookError,
)
from worldbook.llm_port import LLMCapabilities, LLMUsage

_CONTEXT_MARKERS = (
    "context_length_exceeded",
    "exceed_context_size",
    "context length",
    "context size",
    "context window",
    "maximum context",
    "prompt is too long",
    "too many tokens",
    "input is too long",
)
_MESSAGE_MAX = 300
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key")


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """The error a server sent: its type/code and message (any of them may be empty)."""

    status: int
    kind: str
    message: str
    param: str = ""

    def mentions(self, *needles: str) -> bool:
        hay = f"{self.kind} {self.message} {self.param}".casefold()
        return any(needle in hay for needle in needles)


def where(url: str) -> str:
    """``scheme://host[:port]`` of a URL, for messages (never a path with secrets in it)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_MAX else text[: _MESSAGE_MAX - 1] + "…"


def credentials(client: httpx.Client) -> tuple[str, ...]:
    """The secrets worldbook sends with ``client``'s requests (its auth headers' values)."""
    return secrets_of(client.headers.get(name) for name in _CREDENTIAL_HEADERS)


def error_detail(response: httpx.Response, secrets: Iterable[str] = ()) -> ErrorDetail:
    """OpenAI/llama.cpp ``{"error": {...}}`` and Anthropic ``{"type": "error", "error": {...}}``.

    ``secrets`` are cut from the text before anything is read or shortened (a key cut in half
    by the length limit would leak its first half): a broken or hostile server may echo the
    request's headers, and the detail reaches the caller and the logs."""
    text = redact(response.text, secrets)
    try:
        body: Any = json.loads(text)
    except ValueError:
        return ErrorDetail(response.status_code, "", _short(text))
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        kind = str(error.get("type") or error.get("code") or "")
        code = error.get("code")
        if isinstance(code, str) and code != kind:
            kind = f"{kind} {code}".strip()
        message = str(error.get("message") or "")
        param = str(error.get("param") or "")
        return ErrorDetail(response.status_code, kind, _short(message), param)
    if isinstance(error, str):
        return ErrorDetail(response.status_code, "", _short(error))
    return ErrorDetail(response.status_code, "", _short(json.dumps(body)[:_MESSAGE_MAX]))


def retry_after(response: httpx.Response) -> float | None:
    """Seconds from a ``Retry-After`` (delta-seconds or HTTP date) or ``retry-after-ms``."""
    millis = response.headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_context_overflow(detail: ErrorDetail) -> bool:
    return detail.status in (400, 413, 422) and detail.mentions(*_CONTEXT_MARKERS)


def translate(detail: ErrorDetail, response: httpx.Response, url: str) -> WorldbookError:
    """The worldbook error for a failed model call (format refusals are handled by callers)."""
    said = f"HTTP {detail.status}" + (f": {detail.message}" if detail.message else "")
    server = where(url)
    if detail.status in (401, 403):
        return LLMAuthFailed(
            f"The language model server at {server} refused worldbook's credentials ({said}). "
            "Check WORLDBOOK_LLM_API_KEY (and WORLDBOOK_LLM_MODEL, if the key is limited "
            "to some models)."
        )
    if detail.status == 429:
        return LLMRateLimited(
            f"The language model server at {server} is rate-limiting worldbook ({said}); "
            "retry later.",
            retry_after=retry_after(response),
        )
    if is_context_overflow(detail) or detail.status == 413:
        return LLMContextTooLong(
            f"The request does not fit the language model's context window ({said}). Send "
            "less text, or configure a model with a larger window (WORLDBOOK_LLM_CONTEXT_TOKENS "
            "tells worldbook its size)."
        )
    if detail.status >= 500:
        return LLMUnavailable(
            f"The language model server at {server} failed ({said}); retry later.",
            retry_after=retry_after(response),
        )
    return LanguageModelError(
        f"The language model server at {server} rejected worldbook's request ({said}). "
        "Check WORLDBOOK_LLM_URL (an OpenAI-compatible URL ends in /v1) and WORLDBOOK_LLM_MODEL."
    )


def _wait_for(error: Exception, attempt: int, max_wait: float) -> float | None:
    """How long to wait before retrying ``error``, or None when it must not be retried."""
    if not isinstance(error, LLMRateLimited | LLMUnavailable):
        return None
    hinted = error.retry_after
    wait = hinted if hinted is not None else 0.5 * (2**attempt)
    return wait if wait <= max_wait else None


def post_json(
    client: httpx.Client,
    url: str,
    body: dict[str, Any],
    *,
    timeout: httpx.Timeout,
    max_retries: int,
    retry_max_wait_s: float,
    sleep: Callable[[float], None] = time.sleep,
    on_error: Callable[[ErrorDetail, httpx.Response], Exception | None] | None = None,
) -> httpx.Response:
    """POST ``body``; retry 429/5xx whose wait is short; raise a worldbook error otherwise.

    ``on_error`` may claim an error response first (the OpenAI adapter turns a refused
    ``response_format`` into its own signal); returning None falls through to :func:`translate`.
    """
    for attempt in range(max_retries + 1):
        try:
            response = client.post(url, json=body, timeout=timeout)
        except httpx.TimeoutException as exc:
            raise LLMTimeout(
                f"The language model at {where(url)} did not answer within {timeout.read:g} s "
                "(WORLDBOOK_LLM_TIMEOUT_S); retry, or ask for less."
            ) from exc
        except httpx.TransportError as exc:
            raise LLMUnavailable(
                f"Cannot reach the language model at {where(url)} ({type(exc).__name__}); "
                "check WORLDBOOK_LLM_URL and that the server is running."
            ) from exc
        if response.status_code < 400:
            return response
        detail = error_detail(response, credentials(client))
        claimed = on_error(detail, response) if on_error is not None else None
        error: Exception = claimed or translate(detail, response, url)
        wait = _wait_for(error, attempt, retry_max_wait_s)
        if wait is None or attempt == max_retries:
            raise error
        sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def json_body(response: httpx.Response, url: str, secrets: Iterable[str] = ()) -> dict[str, Any]:
    """The JSON object of a 2xx reply, or LanguageModelError naming what came instead (with
    ``secrets`` cut from the text it quotes)."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError) as exc:
        raise LanguageModelError(
            f"The language model server at {where(url)} sent a reply that is not JSON "
            f"({_short(redact(response.text, secrets)[:200])!r}); check WORLDBOOK_LLM_URL."
        ) from exc
    if not isinstance(body, dict):
        raise LanguageModelError(
            f"The language model server at {where(url)} sent JSON that is not an object."
        )
    return body


class HttpOptions(TypedDict, total=False):
    """The connection options both adapters take as keywords (defaults in :class:`HttpChannel`).

    ``transport``: an httpx transport (tests pass ``httpx.MockTransport``); ``sleep``: how
    retries wait (tests pass a recorder)."""

    timeout_s: float
    connect_timeout_s: float
    max_retries: int
    retry_max_wait_s: float
    transport: httpx.BaseTransport | None
    sleep: Callable[[float], None]


class HttpChannel:
    """One adapter's connection to its server: the client, timeouts and bounded retries.

    Both adapters post one JSON body per call and time it; only the URL, the headers and what a
    refusal means differ, so this is the one place that holds the rest.
    """

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        *,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 10.0,
        max_retries: int = 2,
        retry_max_wait_s: float = 10.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = url
        self._timeout = httpx.Timeout(timeout_s, connect=connect_timeout_s)
        self._max_retries = max_retries
        self._retry_max_wait_s = retry_max_wait_s
        self._sleep = sleep
        self._client = httpx.Client(headers=headers, transport=transport, timeout=self._timeout)

    def close(self) -> None:
        self._client.close()

    def post(
        self,
        body: dict[str, Any],
        *,
        timeout_s: float | None,
        on_error: Callable[[ErrorDetail, httpx.Response], Exception | None] | None = None,
    ) -> tuple[dict[str, Any], float]:
        """The reply's JSON object and the call's latency in ms; ``timeout_s`` overrides the
        read timeout for this call (the connect timeout stays)."""
        timeout = self._timeout
        if timeout_s is not None:
            timeout = httpx.Timeout(timeout_s, connect=self._timeout.connect)
        started = time.perf_counter()
        response = post_json(
            self._client,
            self.url,
            body,
            timeout=timeout,
            max_retries=self._max_retries,
            retry_max_wait_s=self._retry_max_wait_s,
            sleep=self._sleep,
            on_error=on_error,
        )
        latency_ms = (time.perf_counter() - started) * 1000
        return json_body(response, self.url, credentials(self._client)), latency_ms


class HttpLLM:
    """What both adapters share: the channel to their endpoint, the capabilities of an API that
    takes JSON schemas and tools, and :meth:`close`."""

    def __init__(
        self,
        url: str,
        headers: dict[str, str],
        *,
        context_tokens: int,
        max_output_tokens: int,
        http: HttpOptions,
    ) -> None:
        self.url = url
        self._channel = HttpChannel(url, headers, **http)
        self._capabilities = LLMCapabilities(
            json_schema=True,
            tools=True,
            context_tokens=context_tokens,
            max_output_tokens=max_output_tokens,
        )

    @property
    def capabilities(self) -> LLMCapabilities:
        return self._capabilities

    def close(self) -> None:
        self._channel.close()


def truncated(request_max_output_tokens: int, partial: str) -> LLMTruncated:
    """The error for a reply cut at the output limit (``length`` / ``max_tokens``)."""
    return LLMTruncated(
        f"The language model's reply stopped at the output limit of "
        f"{request_max_output_tokens} tokens.",
        partial=partial,
    )


def count(value: object) -> int:
    """A usage count from a reply: the integer sent, or 0 for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def reply_usage(body: dict[str, Any], input_key: str, output_key: str) -> LLMUsage:
    """The token counts in a reply's ``usage`` object (each 0 when missing or not a count)."""
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return LLMUsage(
        input_tokens=count(usage.get(input_key)), output_tokens=count(usage.get(output_key))
    )
