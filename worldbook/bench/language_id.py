"""The rule-based language guess now lives in :mod:`worldbook.core.language_id` (the engine
uses it to centre entry rows per language); re-exported for the benchmarks."""

from worldbook.core.language_id import detect_language

__all__ = ["detect_language"]
