"""worldbook: decides which lore reaches the model, within token budgets, in any language.

The public library API. A process builds one :class:`Components` from settings and passes it
to the use cases::

    parts = Components(WorldbookSettings())
    result = select_turn(parts, user_id="local", source=BookSource(book_ids=(book_id,)),
                         messages=[Message("user", "Who rules Eldoria?")],
                         profile=ModelProfile(input_window=8192))
    result.to_json()
"""

from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.rendering import RenderedPrompt, render
from worldbook.core.selection import select
from worldbook.core.types import (
    BookMode,
    LoreBook,
    LoreEntry,
    Message,
    ModelProfile,
    Selection,
    SelectionRules,
    Turn,
    Visibility,
)
from worldbook.errors import WorldbookError
from worldbook.service.components import Components
from worldbook.service.importing import ImportResult, export, import_book
from worldbook.service.turns import (
    BookSource,
    CastMember,
    TurnResult,
    lookup_entry,
    preview,
    select_turn,
)
from worldbook.settings import WorldbookSettings

__all__ = [
    "BookDraft",
    "BookMode",
    "BookSource",
    "CastMember",
    "Components",
    "EntryDraft",
    "ImportResult",
    "LoreBook",
    "LoreEntry",
    "Message",
    "ModelProfile",
    "RenderedPrompt",
    "Selection",
    "SelectionRules",
    "Turn",
    "TurnResult",
    "Visibility",
    "WorldbookError",
    "WorldbookSettings",
    "export",
    "import_book",
    "lookup_entry",
    "preview",
    "render",
    "select",
    "select_turn",
]
