"""Language-model adapters behind the ``LLM`` port (:mod:`worldbook.llm_port`).

:func:`build_llm` turns the ``WORLDBOOK_LLM_*`` settings into an adapter, or None when no model
is configured — callers then answer :class:`LLMNotConfigured` (generate) or fall back on the
deterministic splitter (split).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from urllib.parse import urlsplit

from worldbook.adapters.llm.anthropic import AnthropicLLM
from worldbook.adapters.llm.openai_compat import OpenAICompatibleLLM
from worldbook.errors import LLMNotConfigured
from worldbook.llm_port import LLM
from worldbook.settings import WorldbookSettings

__all__ = ["AnthropicLLM", "OpenAICompatibleLLM", "build_llm", "close_llm", "provider_of"]


def close_llm(llm: object) -> None:
    """Release an adapter's connections (the port itself has no ``close``: fakes need none)."""
    close = getattr(llm, "close", None)
    if callable(close):
        close()


def provider_of(settings: WorldbookSettings) -> str:
    """``openai`` or ``anthropic``: as set, or judged from the URL's host."""
    if settings.llm_provider != "auto":
        return settings.llm_provider
    host = urlsplit(settings.llm_url or "").hostname or ""
    return "anthropic" if host == "anthropic.com" or host.endswith(".anthropic.com") else "openai"


def build_llm(settings: WorldbookSettings) -> LLM | None:
    """The configured model's adapter, or None when ``WORLDBOOK_LLM_URL`` is unset."""
    if not settings.llm_url:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    factory: Callable[..., LLM]
    if provider_of(settings) == "anthropic":
        if not settings.llm_model:
            raise LLMNotConfigured(
                "The Anthropic API needs a model name: set WORLDBOOK_LLM_MODEL "
                "(for example claude-sonnet-4-5)."
            )
        factory = partial(AnthropicLLM, model=settings.llm_model)
    else:
        factory = partial(OpenAICompatibleLLM, model=settings.llm_model)
    return factory(
        settings.llm_url,
        api_key=key,
        timeout_s=settings.llm_timeout_s,
        connect_timeout_s=settings.llm_connect_timeout_s,
        context_tokens=settings.llm_context_tokens,
        max_output_tokens=settings.llm_max_output_tokens,
        max_retries=settings.llm_max_retries,
        retry_max_wait_s=settings.llm_retry_max_wait_s,
    )
