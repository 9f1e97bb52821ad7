"""The few numbers the importers need, in one place.

These mirror DESIGN §6 (entry title 2–100, lore 20–20,000 with wide characters counting twice,
aliases ≤50 each ≤120, book title ≤120, description ≤2,000, entries per book 2,000). A teammate
owns ``worldbook/core/limits.py``; the lead will fold these into it later.
"""

from __future__ import annotations

TITLE_MIN = 2
TITLE_MAX = 100
LORE_MIN_WORLD = 20
LORE_MIN_CLASSIC = 1
LORE_MAX = 20_000
ALIASES_MAX = 50
ALIAS_MAX_CHARS = 120
BOOK_TITLE_MAX = 120
BOOK_DESCRIPTION_MAX = 2_000
ENTRIES_PER_BOOK_MAX = 2_000

# Hostile-input bounds (ours, not DESIGN's): what we agree to read at all.
MAX_BYTES_DEFAULT = 20 * 1024 * 1024
JSON_MAX_DEPTH = 64
JSON_MAX_CONTAINERS = 500_000  # 2,000 entries need ~20 each; this is 250 per entry
PNG_MAX_CHUNKS = 100_000
ZIP_MAX_MEMBERS = 10_000
ZIP_MAX_RATIO = 200  # declared uncompressed / compressed size for card.json
