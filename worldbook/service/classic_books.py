"""Turn stored books into the classic engine's :class:`ClassicBook` (DESIGN §3).

Classic books take part with every entry; a hybrid book (a world book whose entries with keys
also activate by keyword) with its keyed, non-canon entries only, never as constants — its
canon is already in the prompt and its other entries reach the model by name and meaning.

Built books are cached by (book id, version, tokenizer): any edit bumps the version, so a cached
book is never stale, also across processes. The compiled matcher is cached by the engine's
:class:`~worldbook.core.classic.ClassicMatcherCache` on the same version. A new version is built
from the last one (ADR 0008: no turn pays for an edit): only the entries whose stamp
moved are read and made again, the others are the very same objects — so the macro view
(``service/macro_books.py``) searches only those again and the matcher compiles only those
(the book's ``family`` names the versions it may compile from).

Settings and entry fields (docs/decisions.md):
- book settings by the engine's names (:data:`worldbook.core.limits.BOOK_SETTINGS`), the old
  ``recursive`` read when ``recursive_scanning`` is absent;
- SillyTavern's extras the engine reads are not columns: they live in the entry's
  ``extensions`` under SillyTavern's names (what the importers keep and the exporters write);
  a value of the wrong type is ignored, never an error (they are the file's data);
- CCv3 ``use_regex: false`` (kept by the card importer) makes keys plain text; ``true`` is
  what SillyTavern writes for every card, so it means nothing and the shape rule applies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from worldbook.core.classic import ClassicBook, ClassicEntry, ClassicSettings
from worldbook.core.records import BookRecord, EntryRecord
from worldbook.core.types import BookMode
from worldbook.ports import EntryReader
from worldbook.runtime.lru import LRU
from worldbook.service.same_named import same_named

_Key = tuple[str, int, str]


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else None


def classic_settings(settings: Mapping[str, Any]) -> ClassicSettings:
    """The engine's settings from a book's ``settings`` (missing or malformed: the default;
    the store validated what the API and importers wrote)."""
    base = ClassicSettings()
    recursive = _bool(settings.get("recursive_scanning"))
    if recursive is None:
        recursive = _bool(settings.get("recursive"))

    def number(name: str, default: int) -> int:
        found = _int(settings.get(name))
        return default if found is None else found

    def flag(name: str, default: bool) -> bool:
        found = _bool(settings.get(name))
        return default if found is None else found

    return ClassicSettings(
        scan_depth=number("scan_depth", base.scan_depth),
        token_budget=number("token_budget", base.token_budget),
        recursive_scanning=base.recursive_scanning if recursive is None else recursive,
        case_sensitive=flag("case_sensitive", base.case_sensitive),
        whole_words=flag("whole_words", base.whole_words),
        group_scoring=flag("group_scoring", base.group_scoring),
        min_activations=number("min_activations", base.min_activations),
        min_activations_depth_max=number(
            "min_activations_depth_max", base.min_activations_depth_max
        ),
    )


def _timed(ext: Mapping[str, Any], name: str) -> int | None:
    found = _int(ext.get(name))
    return found if found is not None and found > 0 else None


def _delay_until_recursion(value: object) -> int:
    """SillyTavern: false/0 off, true = level 1, a number = that level."""
    if value is True:
        return 1
    found = _int(value)
    return found if found is not None and found > 0 else 0


def _use_regex(ext: Mapping[str, Any]) -> bool | None:
    card = ext.get("card")
    if isinstance(card, dict) and card.get("use_regex") is False:
        return False
    return None


def st_extras(ext: Mapping[str, Any]) -> dict[str, Any]:
    """The ClassicEntry fields kept in ``extensions`` under SillyTavern's names."""
    group = ext.get("group")
    weight = _int(ext.get("groupWeight"))
    return {
        "exclude_recursion": ext.get("excludeRecursion") is True,
        "prevent_recursion": ext.get("preventRecursion") is True,
        "delay_until_recursion": _delay_until_recursion(ext.get("delayUntilRecursion")),
        "group": group if isinstance(group, str) else "",
        "group_override": ext.get("groupOverride") is True,
        "group_weight": weight if weight is not None and weight >= 0 else 100,
        "group_scoring": _bool(ext.get("useGroupScoring")),
        "sticky": _timed(ext, "sticky"),
        "cooldown": _timed(ext, "cooldown"),
        "delay": _timed(ext, "delay"),
        "use_regex": _use_regex(ext),
    }


def classic_entry(record: EntryRecord, tokens: int | None, *, hybrid: bool) -> ClassicEntry:
    """One engine entry from a stored entry (``tokens``: of the rendered lore, or None)."""
    same = same_named(record, ClassicEntry)
    same["constant"] = record.constant and not hybrid  # never a constant in a hybrid book
    return ClassicEntry(
        **same,
        content=record.lore,
        tokens=tokens,
        revision=record.updated_at.isoformat(),
        **st_extras(record.extensions),
    )


def takes_part(record: EntryRecord, mode: BookMode) -> bool:
    """Which entries a book brings to the classic pool (see the module doc)."""
    if mode is BookMode.HYBRID:
        return bool(record.keys) and not record.canon
    return True


CountMany = Callable[[Sequence[str]], list[int]]

_Stamps = dict[str, tuple[int, str]]
"""Per entry: position and last change, in list order."""


@dataclass(frozen=True, slots=True)
class _Base:
    """The last build of a book (per tokenizer): what the next version starts from."""

    book: ClassicBook
    mode: BookMode
    stamps: _Stamps
    made: dict[str, ClassicEntry | None]  # per entry id; None: it takes no part (hybrid)


class ClassicBookCache:
    """Bounded LRU of built :class:`ClassicBook` values (thread-safe).

    A new version of a book already built here is built incrementally (ADR 0008: no turn pays
    for an edit), as :class:`~worldbook.service.lore_books.LoreBookCache` does: one narrow query
    lists every entry's stamp, only the entries whose stamp moved are read, made and counted
    again, and the others are reused as the very same objects (which the compiled matcher
    relies on to reuse their compiled specs).
    """

    def __init__(self, store: EntryReader, *, max_books: int = 256) -> None:
        self._store = store
        self._cache: LRU[_Key, ClassicBook] = LRU(max_books)
        self._latest: LRU[tuple[str, str], _Base] = LRU(max_books)
        self.full_builds = 0
        self.incremental_builds = 0

    def get(self, book: BookRecord, *, tokenizer_id: str, count_many: CountMany) -> ClassicBook:
        key = (book.id, book.version, tokenizer_id)
        found = self._cache.get(key)
        if found is not None:
            return found
        base = self._latest.get((book.id, tokenizer_id))
        if base is None or base.mode is not book.mode:
            made = self._build(book, tokenizer_id, count_many)
        else:
            made = self._rebuild(book, tokenizer_id, count_many, base)
        self._cache.put(key, made.book)
        self._latest.put((book.id, tokenizer_id), made)
        self._cache.discard_where(lambda k: k[0] == book.id and k[1] != book.version)
        return made.book

    def _build(self, book: BookRecord, tokenizer_id: str, count_many: CountMany) -> _Base:
        self.full_builds += 1
        # Stamps first: an edit landing between the two reads then looks newer than what was
        # read, and the next version re-reads it (the other order would keep it stale).
        stamps = _stamps(self._store, book.id)
        records = list(self._store.list_entries(book.id))
        made = _made(records, book.mode, count_many)
        stamps = {i: s for i, s in stamps.items() if i in made}  # created after the stamps
        return _Base(_classic_book(book, made, tokenizer_id), book.mode, stamps, made)

    def _rebuild(
        self, book: BookRecord, tokenizer_id: str, count_many: CountMany, base: _Base
    ) -> _Base:
        self.incremental_builds += 1
        stamps = _stamps(self._store, book.id)
        moved = [i for i, s in stamps.items() if base.stamps.get(i) != s]
        fresh = _made(self._store.get_entries(book.id, moved), book.mode, count_many)
        if len(fresh) == len(moved) and list(stamps) == list(base.stamps):
            # Only edits in place (no entry added, removed or moved) — the common edit: swap
            # the edited entries, keep every other one as is.
            swapped = base.made | fresh
            return _Base(_classic_book(book, swapped, tokenizer_id), book.mode, stamps, swapped)
        made: dict[str, ClassicEntry | None] = {}
        for entry_id in list(stamps):  # list order (the stamps come sorted by position)
            if entry_id in fresh:
                made[entry_id] = fresh[entry_id]
            elif entry_id in base.made and entry_id not in moved:
                made[entry_id] = base.made[entry_id]
            else:  # a moved entry missing from ``fresh`` was deleted between the two reads
                del stamps[entry_id]
        return _Base(_classic_book(book, made, tokenizer_id), book.mode, stamps, made)


def _stamps(store: EntryReader, book_id: str) -> _Stamps:
    return {s.entry_id: (s.position, s.changed) for s in store.entry_stamps(book_id)}


def _made(
    records: Sequence[EntryRecord], mode: BookMode, count_many: CountMany
) -> dict[str, ClassicEntry | None]:
    """Engine entries of stored entries (None for those that take no part), in list order."""
    hybrid = mode is BookMode.HYBRID
    taking = [r for r in records if takes_part(r, mode)]
    # Lore opening with decorator lines is counted by the engine after it strips them.
    counts = count_many([r.lore.strip() for r in taking])
    made: dict[str, ClassicEntry | None] = {r.id: None for r in records}
    for r, n in zip(taking, counts, strict=True):
        made[r.id] = classic_entry(r, None if r.lore.startswith("@@") else n, hybrid=hybrid)
    return made


def _classic_book(
    book: BookRecord, made: Mapping[str, ClassicEntry | None], tokenizer_id: str
) -> ClassicBook:
    return ClassicBook(
        id=book.id,
        title=book.title,
        entries=tuple(filter(None, made.values())),  # None: takes no part
        settings=classic_settings(book.settings),
        # The compiled matcher keeps the entries, token counts included: one per tokenizer.
        cache_key=f"{book.version}:{book.mode.value}:{tokenizer_id}",
        family=f"{book.mode.value}:{tokenizer_id}",
    )
