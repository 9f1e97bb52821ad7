"""The one redaction rule (worldbook/adapters/redaction.py) and the language-model adapters
that use it: a server that echoes worldbook's key in its error text never gets it into a
worldbook error message — not even half of it, cut by the message length limit. The proxy's
use is tested end to end in tests/api/test_proxy_redaction.py."""

from __future__ import annotations

import httpx
import pytest

from worldbook import errors
from worldbook.adapters.llm.anthropic import AnthropicLLM
from worldbook.adapters.llm.openai_compat import OpenAICompatibleLLM
from worldbook.adapters.redaction import MARK, redact, secrets_of
from worldbook.llm_port import LLMMessage, LLMRequest

KEY = "sk-echoed-key-0123456789"
REQUEST = LLMRequest(messages=(LLMMessage("user", "Hi"),), max_output_tokens=20)


def test_secrets_of_takes_header_values_and_bare_keys() -> None:
    found = secrets_of([f"Bearer {KEY}", None, "", "short", KEY])
    assert found == (f"Bearer {KEY}", KEY)  # longest first; too short to matter left out


def test_redact_text_and_bytes() -> None:
    secrets = secrets_of([f"Bearer {KEY}"])
    assert redact(f"sent Bearer {KEY} and {KEY}", secrets) == f"sent {MARK} and {MARK}"
    assert redact(f'{{"k": "{KEY}"}}'.encode(), secrets) == f'{{"k": "{MARK}"}}'.encode()
    clean = "nothing to hide"
    assert redact(clean, secrets) is clean
    assert redact("x is x", secrets_of(["x"])) == "x is x"  # a 1-character "key" mangles nothing


def _openai(reply: httpx.Response) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "http://127.0.0.1:9/v1",
        api_key=KEY,
        model="m",
        transport=httpx.MockTransport(lambda _: reply),
        sleep=lambda _: None,
        max_retries=0,
    )


@pytest.mark.parametrize("padding", [0, 258], ids=["short", "across-the-length-limit"])
def test_openai_adapter_cuts_an_echoed_key(padding: int) -> None:
    text = "x" * padding + f" bad header Authorization: Bearer {KEY}"
    reply = httpx.Response(401, json={"error": {"message": text, "type": "invalid_api_key"}})
    with pytest.raises(errors.LLMAuthFailed) as failed:
        _openai(reply).complete(REQUEST)
    assert KEY[:5] not in failed.value.message  # its start would show before the "…"


def test_openai_adapter_cuts_an_echoed_key_from_a_reply_that_is_not_json() -> None:
    with pytest.raises(errors.LanguageModelError) as failed:
        _openai(httpx.Response(200, text=f"<html>key {KEY}</html>")).complete(REQUEST)
    assert KEY not in failed.value.message and MARK in failed.value.message


def test_anthropic_adapter_cuts_an_echoed_key() -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": f"x-api-key {KEY}"}}
    llm = AnthropicLLM(
        "https://api.anthropic.com",
        api_key=KEY,
        model="c",
        transport=httpx.MockTransport(lambda _: httpx.Response(529, json=body)),
        sleep=lambda _: None,
        max_retries=0,
    )
    with pytest.raises(errors.LLMUnavailable) as failed:
        llm.complete(REQUEST)
    assert KEY not in failed.value.message and MARK in failed.value.message
