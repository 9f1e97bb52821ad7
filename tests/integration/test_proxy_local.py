"""The proxy (ADR 0017) end to end with the official SDKs and the real local model server
(xllamacpp + SmolLM2-135M, which serves both ``/v1/chat/completions`` and ``/v1/messages``).

That the lore reached the model is read from the model's own count: the proxied prompt is
longer than the same request sent directly by about the lore's tokens. The tool round trip
runs once through a relay (``tests/scripted_upstream.py``): the tiny model has no tool
template, so the first round's ``lookup_lore`` call is scripted, named as such, and the real
model answers the conversation that carries worldbook's tool result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.api.conftest import auth, make_components
from tests.integration.local_llm import LocalLLMServer
from tests.scripted_upstream import (
    Reply,
    ScriptedUpstream,
    anthropic_answer,
    openai_answer,
    openai_call,
)
from tests.served import TIMEOUT, serve
from worldbook.api.app import create_app
from worldbook.core.drafts import BookDraft, EntryDraft

pytestmark = [pytest.mark.llm_local, pytest.mark.slow]

CANON = (
    "Saltreach is a city of white salt towers on a drowned coast. Its archive lies under the "
    "sea, kept by Vessa the blind, who reads the tides like books and trusts no sailor."
)
ASK = "Describe Saltreach in one sentence."


@pytest.fixture
def world(tmp_path: Path, llm_server: LocalLLMServer) -> Iterator[tuple[str, str, str]]:
    """The served app, a connection token for each protocol."""
    with closing(make_components(tmp_path, secret_key="local secret")) as parts:
        store = parts.services.store
        _, key = store.create_api_key("tests")
        book = store.create_book("alice", BookDraft(title="Saltreach"))
        store.add_entries(book.id, [EntryDraft(title="Saltreach", lore=CANON, canon=True)])
        with serve(create_app(components=parts)) as url:
            tokens = []
            for kind in ("openai", "anthropic"):
                body = {
                    "name": kind,
                    "upstream_kind": kind,
                    "upstream_url": llm_server.base_url,
                    "upstream_key": llm_server.api_key,
                    "book_ids": [book.id],
                    "input_window": 4096,
                }
                made = httpx.post(
                    f"{url}/v1/connections", json=body, headers=auth(key, "alice"), timeout=TIMEOUT
                )
                assert made.status_code == 201, made.text
                tokens.append(made.json()["token"])
            yield url, tokens[0], tokens[1]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_openai_sdk_through_the_proxy(
    world: tuple[str, str, str],
    llm_server: LocalLLMServer,
    stream: bool,
    request: pytest.FixtureRequest,
) -> None:
    url, token, _ = world
    messages: Any = [{"role": "user", "content": ASK}]
    with openai.OpenAI(base_url=llm_server.base_url, api_key=llm_server.api_key) as direct:
        alone = direct.chat.completions.create(model="smol", messages=messages, max_tokens=8)
    proxied = openai.OpenAI(base_url=url + "/openai/v1", api_key=token, max_retries=0)
    request.addfinalizer(proxied.close)
    if stream:
        chunks = list(
            proxied.chat.completions.create(
                model="smol",
                messages=messages,
                max_tokens=16,
                stream=True,
                stream_options={"include_usage": True},
            )
        )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        usage = chunks[-1].usage
    else:
        answer = proxied.chat.completions.create(model="smol", messages=messages, max_tokens=16)
        text, usage = answer.choices[0].message.content or "", answer.usage
    assert text.strip()
    assert usage is not None and alone.usage is not None
    assert usage.prompt_tokens > alone.usage.prompt_tokens + 30  # the canon went in


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_anthropic_sdk_through_the_proxy(
    world: tuple[str, str, str],
    llm_server: LocalLLMServer,
    stream: bool,
    request: pytest.FixtureRequest,
) -> None:
    url, _, token = world
    messages: Any = [{"role": "user", "content": ASK}]
    direct = anthropic.Anthropic(
        base_url=llm_server.base_url.removesuffix("/v1"), api_key=llm_server.api_key
    )
    alone = direct.messages.create(
        model="smol", max_tokens=8, system="Be brief.", messages=messages
    )
    proxied = anthropic.Anthropic(base_url=url + "/anthropic", api_key=token, max_retries=0)
    final: Any
    if stream:
        with proxied.messages.stream(
            model="smol", max_tokens=16, system="Be brief.", messages=messages
        ) as events:
            final = events.get_final_message()
    else:
        final = proxied.messages.create(
            model="smol", max_tokens=16, system="Be brief.", messages=messages
        )
    assert final.content and final.content[0].type == "text" and final.content[0].text.strip()
    # llama.cpp counts a reused prompt prefix as cache reads, not input.
    assert _input(final.usage) > _input(alone.usage) + 30


def _input(usage: Any) -> int:
    return int(usage.input_tokens + (usage.cache_read_input_tokens or 0))


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_tool_round_trip_answered_by_the_real_model(
    tmp_path: Path, llm_server: LocalLLMServer, protocol: str
) -> None:
    relay = ScriptedUpstream(relay=(llm_server.base_url, llm_server.api_key)).start()
    try:
        if protocol == "openai":
            call = openai_call("call_1", "lookup_lore", {"title": "Saltreach"})
            relay.queue(Reply(body=openai_answer(None, [call])))
        else:
            tool = ("tu_1", "lookup_lore", {"title": "Saltreach"})
            relay.queue(Reply(body=anthropic_answer("", tool)))
        with closing(make_components(tmp_path, secret_key="s")) as parts:
            store = parts.services.store
            _, key = store.create_api_key("tests")
            book = store.create_book("alice", BookDraft(title="Saltreach"))
            store.add_entries(book.id, [EntryDraft(title="Saltreach", lore=CANON)])
            with serve(create_app(components=parts)) as url:
                body = {
                    "name": "t",
                    "upstream_kind": protocol,
                    "upstream_url": relay.base_url,
                    "book_ids": [book.id],
                    "supports_tools": True,
                }
                made = httpx.post(
                    f"{url}/v1/connections", json=body, headers=auth(key, "alice"), timeout=TIMEOUT
                )
                text = _ask(protocol, url, made.json()["token"])
    finally:
        relay.stop()
    assert text.strip()  # the real model's answer
    second = relay.seen[-1].body["messages"]
    result = json.dumps(second[-1])
    assert "white salt towers" in result  # worldbook answered the lookup with the lore


def _ask(protocol: str, url: str, token: str) -> str:
    messages: Any = [{"role": "user", "content": "What is Saltreach? Look it up."}]
    if protocol == "openai":
        with openai.OpenAI(base_url=url + "/openai/v1", api_key=token, max_retries=0) as client:
            answer = client.chat.completions.create(model="smol", messages=messages, max_tokens=16)
        assert answer.choices[0].message.tool_calls is None
        return answer.choices[0].message.content or ""
    with anthropic.Anthropic(base_url=url + "/anthropic", api_key=token, max_retries=0) as claude:
        final = claude.messages.create(model="smol", max_tokens=16, messages=messages)
    assert all(b.type == "text" for b in final.content)
    return "".join(b.text for b in final.content if b.type == "text")
