"""worldbook: decides which lore reaches the model, within token budgets, in any language."""

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import (
    BookMode,
    LoreBook,
    LoreEntry,
    Message,
    ModelProfile,
    Selection,
    SelectionRules,
    Visibility,
)
from worldbook.errors import WorldbookError
from worldbook.settings import WorldbookSettings

__all__ = [
    "BookDraft",
    "BookMode",
    "EntryDraft",
    "LoreBook",
    "LoreEntry",
    "Message",
    "ModelProfile",
    "Selection",
    "SelectionRules",
    "Visibility",
    "WorldbookError",
    "WorldbookSettings",
]
