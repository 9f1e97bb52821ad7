"""The numbers the importers need, in one place.

The DESIGN §6 limits are not repeated here: they come from :data:`worldbook.core.limits.LIMITS`,
under the short names the readers and the mapping use. The hostile-input bounds below are the
importers' own.
"""

from __future__ import annotations

from worldbook.core.limits import LIMITS

TITLE_MIN = LIMITS.entry_title_min
TITLE_MAX = LIMITS.entry_title_max
LORE_MIN_WORLD = LIMITS.lore_min
LORE_MIN_CLASSIC = LIMITS.classic_lore_min
LORE_MAX = LIMITS.lore_max
ALIASES_MAX = LIMITS.aliases_max
ALIAS_MAX_CHARS = LIMITS.alias_max
BOOK_TITLE_MAX = LIMITS.book_title_max
BOOK_DESCRIPTION_MAX = LIMITS.book_description_max
ENTRIES_PER_BOOK_MAX = LIMITS.entries_per_book

# Hostile-input bounds (ours, not DESIGN's): what we agree to read at all.
MAX_BYTES_DEFAULT = 20 * 1024 * 1024
JSON_MAX_DEPTH = 64
JSON_MAX_CONTAINERS = 500_000  # 2,000 entries need ~20 each; this is 250 per entry
PNG_MAX_CHUNKS = 100_000
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_RATIO = 200  # declared uncompressed / compressed size for card.json
