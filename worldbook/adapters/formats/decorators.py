"""Decorator lines (``@@name value``) at the head of an entry's content (CCv3 SPEC_V3 "Decorators").

They are split off the lore and kept verbatim, in order, in ``EntryDraft.decorators``, so the
lore never carries them to the model and export can put them back exactly. ``@@@name`` fallback
lines are kept the same way (SPEC_V3: a fallback follows the decorator it backs up).
"""

from __future__ import annotations

from worldbook.core.classic.decorators import split_content


def split_decorators(content: str) -> tuple[list[str], str]:
    """Leading ``@@`` lines and the remaining text (after the newline that ends the last one):
    the classic engine's own reading of a content's decorator block."""
    return split_content(content)


def join_decorators(lines: list[str], lore: str) -> str:
    """The inverse of :func:`split_decorators`: content as the source tools store it."""
    if not lines:
        return lore
    return "\n".join(lines) + "\n" + lore
