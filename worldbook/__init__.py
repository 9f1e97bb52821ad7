"""worldbook: decides which lore reaches the model, within token budgets, in any language.

The public library API. A process builds one :class:`Components` (the composition root) from
settings and passes its ``services`` to the use cases::

    services = Components(WorldbookSettings()).services
    result = select_turn(services, user_id="local", source=BookSource(book_ids=(book_id,)),
                         messages=[Message("user", "Who rules Eldoria?")],
                         profile=ModelProfile(input_window=8192))
    result.to_json()

Names are imported lazily (PEP 562): ``import worldbook`` loads nothing heavy, and the pure
core (``worldbook.core``) never pulls in SQLAlchemy, FAISS, torch or HTTP code.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worldbook.core.drafts import BookDraft, EntryDraft
    from worldbook.core.rendering import RenderedPrompt, render
    from worldbook.core.selection import select
    from worldbook.core.turn_request import BookSource, CastMember, TurnKind, TurnRequest
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
    from worldbook.service.services import Services
    from worldbook.service.turns import (
        TurnResult,
        lookup,
        lookup_entry,
        preview,
        run_turn,
        select_turn,
    )
    from worldbook.settings import WorldbookSettings

_HOMES = {
    "BookDraft": "worldbook.core.drafts",
    "EntryDraft": "worldbook.core.drafts",
    "RenderedPrompt": "worldbook.core.rendering",
    "render": "worldbook.core.rendering",
    "select": "worldbook.core.selection",
    "BookMode": "worldbook.core.types",
    "LoreBook": "worldbook.core.types",
    "LoreEntry": "worldbook.core.types",
    "Message": "worldbook.core.types",
    "ModelProfile": "worldbook.core.types",
    "Selection": "worldbook.core.types",
    "SelectionRules": "worldbook.core.types",
    "Turn": "worldbook.core.types",
    "Visibility": "worldbook.core.types",
    "WorldbookError": "worldbook.errors",
    "Components": "worldbook.service.components",
    "Services": "worldbook.service.services",
    "ImportResult": "worldbook.service.importing",
    "export": "worldbook.service.importing",
    "import_book": "worldbook.service.importing",
    "BookSource": "worldbook.core.turn_request",
    "CastMember": "worldbook.core.turn_request",
    "TurnKind": "worldbook.core.turn_request",
    "TurnRequest": "worldbook.core.turn_request",
    "TurnResult": "worldbook.service.turns",
    "lookup": "worldbook.service.turns",
    "run_turn": "worldbook.service.turns",
    "lookup_entry": "worldbook.service.turns",
    "preview": "worldbook.service.turns",
    "select_turn": "worldbook.service.turns",
    "WorldbookSettings": "worldbook.settings",
}

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
    "Services",
    "Turn",
    "TurnKind",
    "TurnRequest",
    "TurnResult",
    "Visibility",
    "WorldbookError",
    "WorldbookSettings",
    "export",
    "import_book",
    "lookup",
    "lookup_entry",
    "preview",
    "render",
    "run_turn",
    "select",
    "select_turn",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'worldbook' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
