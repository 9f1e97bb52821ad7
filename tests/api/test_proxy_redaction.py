"""The upstream key never reaches the app (ADR 0017, docs/design/proxy.md, Errors): an upstream
that echoes the request's ``Authorization`` / ``x-api-key`` in its error body or error event
has the key cut out of what the proxy passes on — non-streaming and streaming, the first round
and a later one, both protocols, and ``GET /models``. The session's log watch
(tests/conftest.py) is given the key too, so no log line carries it either."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.api.conftest import UPSTREAM_KEY, Proxy
from tests.scripted_upstream import Reply, anthropic_answer, anthropic_events, openai_chunks
from tests.served import TIMEOUT

OPENAI_ECHO = {
    "error": {
        "message": "Incorrect API key provided: $authorization (sent as $authorization)",
        "type": "invalid_request_error",
        "code": "invalid_api_key",
    }
}
ANTHROPIC_ECHO = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key: $x-api-key"},
}
ASK = [{"role": "user", "content": "Saltreach?"}]


@pytest.fixture(autouse=True)
def _key_is_watched(log_watch: Any) -> None:
    log_watch.plant(UPSTREAM_KEY)


def _raw(proxy: Proxy, token: str, protocol: str, **body: Any) -> httpx.Response:
    """The app's request as bytes on the wire: what an app (not only an SDK) would read."""
    path = "/openai/v1/chat/completions" if protocol == "openai" else "/anthropic/v1/messages"
    sent = {"model": "m", "max_tokens": 50, "messages": ASK, **body}
    headers = {"authorization": f"Bearer {token}"}
    return httpx.post(proxy.url + path, json=sent, headers=headers, timeout=TIMEOUT)


def _clean(text: str) -> None:
    assert UPSTREAM_KEY not in text
    assert "[redacted]" in text


def test_echoed_key_is_cut_from_openai_errors_whole_and_streamed(proxy: Proxy) -> None:
    conn = proxy.connect()
    client = openai.OpenAI(base_url=proxy.url + "/openai/v1", api_key=conn["token"], max_retries=0)
    proxy.upstream.queue(Reply(401, OPENAI_ECHO, echo=True))
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    _clean(caught.value.message)
    _clean(caught.value.response.text)
    assert proxy.upstream.seen[-1].headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    proxy.upstream.queue(Reply(401, OPENAI_ECHO, echo=True))
    streamed = _raw(proxy, conn["token"], "openai", stream=True)
    assert streamed.status_code == 401
    _clean(streamed.text)


def test_echoed_key_is_cut_from_anthropic_errors_whole_and_streamed(proxy: Proxy) -> None:
    conn = proxy.connect(upstream_kind="anthropic")
    client = anthropic.Anthropic(
        base_url=proxy.url + "/anthropic", api_key=conn["token"], max_retries=0
    )
    proxy.upstream.queue(Reply(401, ANTHROPIC_ECHO, echo=True))
    with pytest.raises(anthropic.AuthenticationError) as caught:
        client.messages.create(model="c", max_tokens=50, messages=ASK)  # type: ignore[arg-type]
    _clean(caught.value.message)
    _clean(caught.value.response.text)
    assert proxy.upstream.seen[-1].headers["x-api-key"] == UPSTREAM_KEY
    proxy.upstream.queue(Reply(401, ANTHROPIC_ECHO, echo=True))
    streamed = _raw(proxy, conn["token"], "anthropic", stream=True)
    assert streamed.status_code == 401
    _clean(streamed.text)


def test_echoed_key_is_cut_from_error_events_mid_stream(proxy: Proxy) -> None:
    gpt = proxy.connect()
    broken = openai_chunks(["The towers "])
    assert broken.events is not None
    broken.events[1:] = [(None, OPENAI_ECHO)]  # the text, then an error chunk, no [DONE]
    proxy.upstream.queue(Reply(events=broken.events, echo=True))
    streamed = _raw(proxy, gpt["token"], "openai", stream=True)
    assert streamed.status_code == 200 and "The towers " in streamed.text
    _clean(streamed.text)
    claude = proxy.connect(upstream_kind="anthropic")
    overloaded = anthropic_events("Salt ")
    assert overloaded.events is not None
    overloaded.events[4:] = [("error", ANTHROPIC_ECHO)]  # after the text block, an error
    proxy.upstream.queue(Reply(events=overloaded.events, echo=True))
    streamed = _raw(proxy, claude["token"], "anthropic", stream=True)
    assert streamed.status_code == 200 and "event: error" in streamed.text
    _clean(streamed.text)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_echoed_key_is_cut_when_a_later_round_fails(proxy: Proxy, stream: bool) -> None:
    conn = proxy.connect(upstream_kind="anthropic", supports_tools=True)
    lookup = ("tu_1", "lookup_lore", {"title": "Vessa"})
    first = anthropic_events("Checking. ", lookup)
    if not stream:
        first = Reply(body=anthropic_answer("", lookup))
    proxy.upstream.queue(first, Reply(500, ANTHROPIC_ECHO, echo=True))
    answer = _raw(proxy, conn["token"], "anthropic", stream=stream)
    assert answer.status_code == (200 if stream else 500)
    _clean(answer.text)
    assert len(proxy.upstream.seen) == 2  # the failure came in the second round


def test_echoed_key_is_cut_from_the_models_list_error(proxy: Proxy) -> None:
    conn = proxy.connect()
    proxy.upstream.models = Reply(401, OPENAI_ECHO, echo=True)
    listed = httpx.get(
        proxy.url + "/openai/v1/models",
        headers={"authorization": f"Bearer {conn['token']}"},
        timeout=TIMEOUT,
    )
    assert listed.status_code == 401
    _clean(listed.text)
