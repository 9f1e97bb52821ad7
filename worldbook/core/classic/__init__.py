"""The classic (keyword) lorebook engine: SillyTavern / CCv3 semantics, pure (docs/classic.md).

Build :class:`ClassicBook` / :class:`ClassicEntry` from stored entries, call
:func:`select_classic` with the chat's :class:`ChatState`, render the activations, write the
returned state in the turn's transaction (a preview discards it).
"""

from worldbook.core.classic.engine import select_classic
from worldbook.core.classic.matchers import ClassicMatchers, CompileEach
from worldbook.core.classic.model import (
    AND_ALL,
    AND_ANY,
    MAX_PASSES,
    NOT_ALL,
    NOT_ANY,
    ClassicBook,
    ClassicEntry,
    ClassicSettings,
    ClassicTurn,
)
from worldbook.core.classic.result import Activation, ClassicResult, KeyHit, TraceRecord
from worldbook.core.classic.state import (
    ChatState,
    EntryChatState,
    TimedEffect,
    book_state_from_json,
    book_state_to_json,
)

__all__ = [
    "AND_ALL",
    "AND_ANY",
    "MAX_PASSES",
    "NOT_ALL",
    "NOT_ANY",
    "Activation",
    "ChatState",
    "ClassicBook",
    "ClassicEntry",
    "ClassicMatchers",
    "ClassicResult",
    "ClassicSettings",
    "ClassicTurn",
    "CompileEach",
    "EntryChatState",
    "KeyHit",
    "TimedEffect",
    "TraceRecord",
    "book_state_from_json",
    "book_state_to_json",
    "select_classic",
]
