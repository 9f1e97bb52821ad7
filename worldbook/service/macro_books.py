"""Books as a turn sees them: with ``{{char}}``, ``{{user}}`` and the lore macros filled in
(ADR 0012; the rules are :mod:`worldbook.core.macros`).

What is stored and exported never changes; a turn works on a *view* of each book with the names
of its chat: titles, aliases and keys with the names in (so "Loving {{user}}" is named by
"Loving Ari"), lore with the names in (so token counts, budgets and cuts are the text sent).

- ``{{char}}`` is the character whose attachment brought the book in, or — for a book named by
  id — the first cast member's name; ``{{user}}`` is the request's ``user_name``. A macro
  without a name is left as written and the turn's notes say so.
- A view is cached by (book version, tokenizer, names): the names do not change within a chat,
  so the stable prefix of its turns stays byte-identical. Books without macros are their own
  view (no copy, shared caches).
- A view gets its own ``version`` (derived texts such as cuts key on it) and, when its titles or
  aliases changed, its own ``matcher_version``: different names never share an automaton, and
  a book whose macros are only in its lore keeps sharing one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from worldbook.core.classic import ClassicBook, ClassicEntry
from worldbook.core.macros import MacroNames, has_macros, substitute
from worldbook.core.types import LoreBook, LoreEntry
from worldbook.runtime.lru import LRU

if TYPE_CHECKING:
    from worldbook.core.turn_request import BookSource

CountMany = Callable[[Sequence[str]], list[int]]


@dataclass(frozen=True, slots=True)
class View:
    """A book as the turn sees it, the macros left for want of a name, and the name macros
    filled with a preview's stand-in names."""

    book: LoreBook
    missing: frozenset[str] = frozenset()
    stood_in: frozenset[str] = frozenset()


STAND_INS = {"user": "User", "char": "Character"}
"""What a preview shows for a name the request did not give (SillyTavern's default persona is
called "User"): a preview shows filled lore, as the model would read it, and says so; a real
turn leaves such a macro as written and says which field would fill it."""


def names_of(
    source: BookSource,
    character: str | None,
    chat_id: str | None,
    user: str | None,
    *,
    stand_ins: bool = False,
) -> MacroNames:
    """The names a book's macros take: its character's name (``character`` is the label its
    attachment gave it: the member's name, or its id when the app sent no name), else the
    first cast member's name for books named by id; with ``stand_ins``, :data:`STAND_INS` for
    the names not given."""
    char: str | None = None
    if character is None:
        char = next((m.name for m in source.characters if m.name), None)
    else:
        char = next((m.name for m in source.characters if m.name == character), None)
    names = {"char": char, "user": user}
    stood = frozenset(k for k, v in names.items() if v is None) if stand_ins else frozenset()
    filled = {k: STAND_INS[k] if k in stood else v for k, v in names.items()}
    return MacroNames(**filled, chat=chat_id or "", stand_ins=stood)


Namer = Callable[[str | None], MacroNames]
"""The names of a book's macros from the label its attachment gave it (None: named by id)."""


def namer(
    source: BookSource, chat_id: str | None, user: str | None, *, stand_ins: bool = False
) -> Namer:
    return lambda character: names_of(source, character, chat_id, user, stand_ins=stand_ins)


def missing_note(title: str, missing: frozenset[str]) -> str:
    """What the trace says of macros left as written for want of a name."""
    left = ", ".join(f"{{{{{m}}}}}" for m in sorted(missing))
    needs = " and ".join(_ASKS[m] for m in sorted(missing))
    return f"Book '{title}': {left} left as written — give {needs} to fill it in."


def stand_in_note(title: str, stood_in: frozenset[str]) -> str:
    """What a preview says of names filled with stand-ins."""
    shown = ", ".join(f"{{{{{m}}}}} as '{STAND_INS[m]}'" for m in sorted(stood_in))
    needs = " and ".join(_ASKS[m] for m in sorted(stood_in))
    return f"Book '{title}': preview shows {shown}; a real turn fills it from {needs}."


_ASKS = {"user": "user_name in the request", "char": "a cast member with a name"}


def _tag(names: MacroNames) -> str:
    return hashlib.blake2b(names.key.encode(), digest_size=6).hexdigest()


_EntryScan = tuple[LoreEntry, bool]
"""An entry as last searched for macros, and whether it had any."""


def _same_texts(a: LoreEntry, b: LoreEntry) -> bool:
    return a is b or (a.lore == b.lore and a.title == b.title and a.aliases == b.aliases)


class MacroBooks:
    """Bounded caches of world and classic views (thread-safe)."""

    def __init__(self, *, max_views: int = 512) -> None:
        self._plain: LRU[tuple[str, str], bool] = LRU(max_views)
        # Per book: each entry's texts when last searched for macros, and whether it had any.
        self._entries: LRU[str, dict[str, _EntryScan]] = LRU(max_views)
        self._views: LRU[tuple[str, str, str, str], tuple[LoreBook, View]] = LRU(max_views)
        self._classic: LRU[tuple[str, str], tuple[ClassicBook, ClassicBook]] = LRU(max_views)
        # Per classic book: each entry as last searched for macros, and whether it had any.
        self._classic_entries: LRU[str, dict[str, tuple[ClassicEntry, bool]]] = LRU(max_views)
        # Per classic book and names: its entries with macros as last filled in.
        self._classic_filled: LRU[tuple[str, str, str], _Filled] = LRU(max_views)

    def view(
        self, book: LoreBook, names: MacroNames, *, tokenizer_id: str, count_many: CountMany
    ) -> View:
        """``book`` with its macros filled (``book`` itself when it has none)."""
        if not self._has_macros(book):
            return View(book)
        key = (book.id, book.version, tokenizer_id, names.key)
        cached = self._views.get(key)
        if cached is not None and cached[0] is book:  # the same build (indexed flags included)
            return cached[1]
        made = _world_view(book, names, count_many)
        self._views.put(key, (book, made))
        return made

    def classic(self, book: ClassicBook, names: MacroNames, count_many: CountMany) -> ClassicBook:
        """A classic book with its keys and content filled (itself when it has no macros)."""
        key = (book.cache_key, names.key)
        cached = self._classic.get(key)
        if cached is not None and cached[0] is book:
            return cached[1]
        macros = self._classic_macros(book)
        made = book
        if any(macros):
            last_key = (book.id, book.family, names.key)
            last = self._classic_filled.get(last_key) or {}
            made, filled = _classic_view(book, macros, names, count_many, last)
            self._classic_filled.put(last_key, filled)
        self._classic.put(key, (book, made))
        return made

    def _classic_macros(self, book: ClassicBook) -> list[bool]:
        """Per entry, whether it has a macro. As for world books (:meth:`_scan`), a new version
        holds its unchanged entries as the very same objects (``service/classic_books.py``):
        only the changed ones are searched again."""
        seen = self._classic_entries.get(book.id) or {}
        now: dict[str, tuple[ClassicEntry, bool]] = {}
        for e in book.entries:
            known = seen.get(e.id)
            if known is not None and known[0] is e:
                now[e.id] = known
            else:
                texts = (e.title, e.content, *e.keys, *e.secondary_keys)
                now[e.id] = (e, any(has_macros(t) for t in texts))
        self._classic_entries.put(book.id, now)
        return [now[e.id][1] for e in book.entries]

    def _has_macros(self, book: LoreBook) -> bool:
        key = (book.id, book.version)
        found = self._plain.get(key)
        if found is None:
            found = self._scan(book)
            self._plain.put(key, found)
        return found

    def _scan(self, book: LoreBook) -> bool:
        """Whether any entry has a macro. An edit makes a new version of the book whose
        unchanged entries hold the very same strings (``service/lore_books.py``), so only the
        changed entries are searched again: a whole 100,000-alias book costs ≈150 ms, which
        the first turn after every edit would pay (ADR 0008)."""
        seen = self._entries.get(book.id) or {}
        now: dict[str, _EntryScan] = {}
        for e in book.entries:
            known = seen.get(e.id)
            if known is not None and _same_texts(known[0], e):
                now[e.id] = (e, known[1])
            else:
                flag = has_macros(e.lore) or has_macros(e.title) or any(map(has_macros, e.aliases))
                now[e.id] = (e, flag)
        self._entries.put(book.id, now)
        return any(flag for _, flag in now.values())


def _world_view(book: LoreBook, names: MacroNames, count_many: CountMany) -> View:
    missing: set[str] = set()
    stood_in: set[str] = set()
    names_changed = False
    entries: list[LoreEntry] = []
    recount: list[int] = []
    for entry in book.entries:
        title = substitute(entry.title, names, f"{entry.id}.title")
        aliases = [
            substitute(a, names, f"{entry.id}.alias.{i}") for i, a in enumerate(entry.aliases)
        ]
        lore = substitute(entry.lore, names, f"{entry.id}.lore")
        for part in (title, lore, *aliases):
            missing |= part.missing
            stood_in |= part.stood_in
        new_aliases = tuple(a.text for a in aliases)
        if title.text != entry.title or new_aliases != entry.aliases:
            names_changed = True
        # Stripped as the stored lore is (service/lore_books.sent_lore): a removed comment
        # must not leave whitespace that is sent but was not counted.
        filled = lore.text.strip()
        if filled != entry.lore:
            recount.append(len(entries))
        entries.append(replace(entry, title=title.text, aliases=new_aliases, lore=filled))
    for i, tokens in zip(recount, count_many([entries[i].lore for i in recount]), strict=True):
        entries[i] = replace(entries[i], tokens=tokens)
    tag = _tag(names)
    family, matcher_version = book.matcher_key
    if names_changed:  # its own automaton family, diffed against itself across edits
        family = f"{family}~{tag}"
    view = replace(
        book,
        entries=tuple(entries),
        version=f"{book.version}~{tag}",
        matcher_id=family,
        matcher_version=matcher_version,
    )
    return View(view, frozenset(missing), frozenset(stood_in))


_Filled = dict[str, tuple[ClassicEntry, ClassicEntry]]
"""Per entry id of a classic book's view: the entry as stored and as filled with the names."""


def _classic_view(
    book: ClassicBook, macros: list[bool], names: MacroNames, count_many: CountMany, last: _Filled
) -> tuple[ClassicBook, _Filled]:
    """``book`` with the names in the entries that have macros (``macros``: which ones), and
    those entries. ``last``: the previous version's, reused for the entries that did not
    change (the very same objects: the matcher keeps their compiled specs)."""
    filled: _Filled = {}
    entries: list[ClassicEntry] = []
    fresh: list[int] = []
    for entry, has in zip(book.entries, macros, strict=True):
        known = last.get(entry.id) if has else None
        if known is not None and known[0] is entry:
            filled[entry.id] = known
            entries.append(known[1])
        elif has:
            filled[entry.id] = (entry, _filled(entry, names))
            fresh.append(len(entries))
            entries.append(filled[entry.id][1])
        else:
            entries.append(entry)
    counted = [i for i in fresh if entries[i].tokens is not None]
    texts = [entries[i].content.strip() for i in counted]
    for i, tokens in zip(counted, count_many(texts), strict=True):
        entries[i] = replace(entries[i], tokens=tokens)
        filled[entries[i].id] = (filled[entries[i].id][0], entries[i])
    tag = _tag(names)
    family = f"{book.family}~{tag}" if book.family else ""
    view = replace(book, entries=tuple(entries), cache_key=f"{book.cache_key}~{tag}", family=family)
    return view, filled


def _filled(entry: ClassicEntry, names: MacroNames) -> ClassicEntry:
    """One entry with the names in its title, content and keys."""
    key = entry.id
    return replace(
        entry,
        title=substitute(entry.title, names, f"{key}.title").text,
        content=substitute(entry.content, names, f"{key}.lore").text,
        keys=tuple(substitute(k, names, f"{key}.key").text for k in entry.keys),
        secondary_keys=tuple(
            substitute(k, names, f"{key}.key2").text for k in entry.secondary_keys
        ),
    )
