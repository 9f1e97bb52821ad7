"""One classic book compiled for matching: resolved entries, a key table, one Aho–Corasick
automaton per plain-key variant and the regex keys (docs/design/classic-engine.md).

A book version is compiled once and cached (:class:`ClassicMatcherCache`, keyed by the book's
``cache_key`` and settings); a turn then costs one automaton pass per scanned message and
variant, whatever the number of keys, instead of one regex per key (SillyTavern). Keys are
interned: the same key in the same variant is one key id for every entry that has it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, replace

from worldbook.core.classic.decorators import (
    PRIORITY_IGNORE_ON_MAX_CONTEXT,
    EntryDecorators,
    parse_decorators,
    split_content,
)
from worldbook.core.classic.keys import RegexClock, plain_form, regex_shape, variant_of
from worldbook.core.classic.keytable import KeyTable
from worldbook.core.classic.model import (
    AND_ANY,
    LOGIC_NAMES,
    MAX_SCAN_DEPTH,
    ClassicBook,
    ClassicEntry,
    ClassicRole,
)
from worldbook.core.classic.scanned_text import TextForms

KeyRef = tuple[int, str]  # (key id, the key as the entry wrote it)
DEFAULT_RECORDS = "default_records"  # memo: every spec's turn-independent trace record
INHERITED_RECORDS = "inherited_records"  # memo: the previous version's specs and records
MESSAGE_MEMO_SIZE = 4096  # chat messages remembered per compiled book
PlacementKey = tuple[int, int, int, tuple[int, int, str], str]


def _id_key(entry_id: str) -> tuple[int, int, str]:
    """Lower id first; numeric ids compare as numbers (``9`` before ``10``)."""
    if entry_id.isdigit():
        return (0, int(entry_id), "")
    return (1, 0, entry_id)


def placement(order: int, priority: int, entry: ClassicEntry) -> PlacementKey:
    """Render order (classic.md §1 rule 26): higher order first, then higher priority, then
    the book's list order (``position``; stored ids are random, so "lower id" would be an
    arbitrary order — docs/decisions.md), then lower id (book id last, for
    ties across books)."""
    return (-order, -priority, entry.position, _id_key(entry.id), entry.book_id)


@dataclass(frozen=True, slots=True)
class EntrySpec:
    """An entry with everything resolved that does not depend on the turn."""

    index: int
    entry: ClassicEntry
    text: str  # rendered content (rule 27)
    decorators: EntryDecorators
    depth: int
    depth_from_book: bool  # min-activation sweeps widen only these (SillyTavern skew)
    priority: int
    order: int
    role: ClassicRole
    probability: int
    primary: tuple[KeyRef, ...]
    secondary: tuple[KeyRef, ...]  # empty unless selective (rule 12)
    logic: int
    additional: tuple[tuple[KeyRef, ...], ...]
    exclude: tuple[KeyRef, ...]
    groups: tuple[str, ...]
    group_scoring: bool
    delay_level: int
    notes: tuple[str, ...]  # keys that can never match, ignored decorator lines
    placement: PlacementKey

    @property
    def tokens(self) -> int | None:
        """The count of ``text`` when the entry carries it (``ClassicEntry.tokens`` counts the
        stripped content, which is ``text`` unless decorator lines were taken off its head);
        None: the engine counts ``text`` itself, so the cost is always that of what is sent."""
        if self.entry.tokens is None or self.text != self.entry.content.strip():
            return None
        return self.entry.tokens

    @property
    def logic_name(self) -> str:
        return LOGIC_NAMES.get(self.logic, LOGIC_NAMES[AND_ANY])

    @property
    def plain(self) -> bool:
        """Nothing but timed state and the recursion pass can block it before its keys (the
        fast path of ``evaluate``)."""
        entry, deco = self.entry, self.decorators
        return (
            entry.enabled
            and not entry.delay
            and not deco.gated
            and not self.delay_level
            and not entry.exclude_recursion
        )

    @property
    def forced(self) -> bool:
        """Activates without keys when nothing blocks it (rules 14, 17)."""
        return self.entry.constant or self.decorators.activate


class CompiledBook:
    """Immutable once built (its memos of derived values aside); safe to share between threads.

    ``previous``: an earlier version of the same book (same id and settings) to build from: its
    specs of unchanged entries are reused, only changed and new entries are compiled, and the
    key table and automata follow the change (:mod:`worldbook.core.classic.keytable`) — the
    same answers as a compile from scratch (ADR 0008: no turn pays for an edit)."""

    def __init__(self, book: ClassicBook, previous: CompiledBook | None = None) -> None:
        self.book = book
        self.recursive = book.settings.recursive_scanning
        self.memo: dict[str, object] = {}  # turn-independent values derived from this version
        self.table: KeyTable
        if previous is not None and _successor_of(previous, book):
            self.table = previous.table.successor()
            self.specs, self.owners = self._from(previous)
        else:
            self.table = KeyTable()
            self.specs = tuple(self._spec(i, e) for i, e in enumerate(book.entries))
            for spec in self.specs:
                self.table.use(_kids(spec), 1)
            self.table.build_automata()
            self.owners = _owners(self.specs)
        self._summarise()
        self._content_hits: dict[tuple[str, str, int], frozenset[int]] = {}
        self._content_forms: dict[int, TextForms] = {}
        # Turns of several threads share a cached book. The core holds no lock (threads live in
        # worldbook.runtime): each memo is changed by single dict operations, each atomic.
        self._message_hits: OrderedDict[str, frozenset[int]] = OrderedDict()

    # -- building ---------------------------------------------------------------------------

    def _summarise(self) -> None:
        """What the engine looks up across entries, in one pass (a new version pays it)."""
        max_depth, levels = 0, set()
        forced: list[int] = []
        delayed: list[int] = []
        plain: list[int] = []
        watched: list[int] = []
        for s in self.specs:
            entry, deco = s.entry, s.decorators
            if not entry.enabled:
                continue
            max_depth = max(max_depth, s.depth)
            gated = deco.gated
            if s.delay_level:
                levels.add(s.delay_level)
                delayed.append(s.index)
            if entry.constant or deco.activate:  # ``EntrySpec.forced``
                forced.append(s.index)
            # ``EntrySpec.plain`` (enabled is known here)
            if not (entry.delay or gated or s.delay_level or entry.exclude_recursion):
                plain.append(s.index)
            if gated or deco.keep_activate_after_match or entry.delay:
                watched.append(s.index)
        self.max_depth = max_depth
        self.delay_levels = frozenset(levels)
        self.forced, self.delayed = tuple(forced), tuple(delayed)
        self.plain = frozenset(plain)
        self.watched = tuple(watched)

    def _from(
        self, previous: CompiledBook
    ) -> tuple[tuple[EntrySpec, ...], dict[int, tuple[int, ...]]]:
        """Specs and owners of this version from ``previous`` (see the class doc)."""
        table, entries = self.table, self.book.entries
        specs, kept, shifted = _kept(previous.specs, entries)
        dropped = [s for s in previous.specs if s.index not in kept]
        for spec in dropped:
            table.use(_kids(spec), -1)
        fresh: list[EntrySpec] = []
        for i, found in enumerate(specs):
            if found is None:
                made = specs[i] = self._spec(i, entries[i])
                table.use(_kids(made), 1)
                fresh.append(made)
        removed = table.drop_unused(k for s in dropped for k in _kids(s))
        table.update_automata(table.added, removed)
        done = tuple(s for s in specs if s is not None)
        records = previous.memo.get(DEFAULT_RECORDS)
        if isinstance(records, tuple):  # the turn-independent records of the kept specs
            self.memo[INHERITED_RECORDS] = (previous.specs, records)
        if shifted:  # entries added, removed or moved: every index may have changed
            return done, _owners(done)
        return done, _owners_after(previous.owners, dropped, fresh)

    def _key(self, key: str, entry: ClassicEntry) -> tuple[KeyRef | None, str | None]:
        """Intern one key; returns its ref, or a note when it can never match."""
        written = key.strip()
        if not written:
            return None, None
        shape = regex_shape(written) if entry.use_regex is not False else None
        if entry.use_regex and shape is None:
            shape = (written, "")
        if shape is not None:
            kid, compiled = self.table.regex(written, shape)
            return (kid, written), compiled.problem
        settings = self.book.settings
        case = settings.case_sensitive if entry.case_sensitive is None else entry.case_sensitive
        words = settings.whole_words if entry.whole_words is None else entry.whole_words
        variant = variant_of(case, words)
        form = plain_form(written, variant)
        if form is None:
            return None, None
        return (self.table.plain(variant, form), written), None

    def _keys(
        self, keys: Iterable[str], entry: ClassicEntry, notes: list[str]
    ) -> tuple[KeyRef, ...]:
        refs: list[KeyRef] = []
        for key in keys:
            ref, note = self._key(key, entry)
            if ref is not None:
                refs.append(ref)
            if note:
                notes.append(note)
        return tuple(dict.fromkeys(refs))

    def _spec(self, index: int, entry: ClassicEntry) -> EntrySpec:
        lines, rest = split_content(entry.content)
        deco = parse_decorators((*entry.decorators, *lines))
        notes = [f"decorator ignored: {line}" for line in deco.ignored]
        settings = self.book.settings
        depth = deco.scan_depth if deco.scan_depth is not None else entry.scan_depth
        priority = entry.order if entry.priority is None else entry.priority
        if deco.priority is not None:
            priority = deco.priority
        if deco.ignore_on_max_context:
            priority = PRIORITY_IGNORE_ON_MAX_CONTEXT
        selective = entry.selective and bool(entry.secondary_keys)
        scoring = settings.group_scoring if entry.group_scoring is None else entry.group_scoring
        order = entry.order if deco.order is None else deco.order
        return EntrySpec(
            index=index,
            entry=entry,
            text=rest.strip(),
            decorators=deco,
            depth=_clamp_depth(settings.scan_depth if depth is None else depth),
            depth_from_book=depth is None,
            priority=priority,
            order=order,
            role=deco.role or entry.role,
            probability=entry.probability if deco.probability is None else deco.probability,
            primary=self._keys(entry.keys, entry, notes),
            secondary=self._keys(entry.secondary_keys, entry, notes) if selective else (),
            logic=entry.selective_logic if entry.selective_logic in LOGIC_NAMES else AND_ANY,
            additional=tuple(self._keys(k, entry, notes) for k in deco.additional_keys),
            exclude=self._keys(deco.exclude_keys, entry, notes),
            groups=entry.groups,
            group_scoring=scoring,
            delay_level=max(0, int(entry.delay_until_recursion)),
            notes=tuple(dict.fromkeys(notes)),
            placement=placement(order, priority, entry),
        )

    # -- scanning ---------------------------------------------------------------------------

    def scan(self, text: TextForms, clock: RegexClock) -> frozenset[int]:
        """Key ids found in one text (one message, or one entry's content)."""
        return self.table.scan(text, clock)

    def message_hits(self, text: TextForms, clock: RegexClock) -> frozenset[int]:
        """:meth:`scan` of one chat message, remembered by its text: a chat window slides by a
        message or two per turn, so most messages of a turn were scanned by an earlier one."""
        hits = self._message_hits.get(text.raw)
        if hits is not None:
            return hits
        before = len(clock.timed_out)
        hits = self.scan(text, clock)
        if len(clock.timed_out) == before and self.book.cache_key:
            if len(self._message_hits) >= MESSAGE_MEMO_SIZE:
                with suppress(KeyError):  # another thread emptied it in between
                    self._message_hits.popitem(last=False)  # the oldest, in one operation
            self._message_hits[text.raw] = hits
        return hits

    def content_forms(self, index: int) -> TextForms:
        """The rendered content of entry ``index`` as a scanned text (recursion), kept."""
        forms = self._content_forms.get(index)
        if forms is None:
            forms = self._content_forms[index] = TextForms(self.specs[index].text)
        return forms

    def content_hits(
        self, source: CompiledBook, index: int, text: TextForms, clock: RegexClock
    ) -> frozenset[int]:
        """Key ids of this book found in the content of entry ``index`` of ``source``;
        remembered while both book versions are cached (content does not change)."""
        if not self.book.cache_key or not source.book.cache_key:
            return self.scan(text, clock)
        memo_key = (source.book.id, source.book.cache_key, index)
        hits = self._content_hits.get(memo_key)
        if hits is None:
            before = len(clock.timed_out)
            hits = self.scan(text, clock)
            if len(clock.timed_out) == before and len(self._content_hits) < 100_000:
                self._content_hits[memo_key] = hits  # a timeout is not worth remembering
        return hits


def _clamp_depth(depth: int) -> int:
    return max(0, min(MAX_SCAN_DEPTH, depth))


def _kept(
    before: tuple[EntrySpec, ...], entries: tuple[ClassicEntry, ...]
) -> tuple[list[EntrySpec | None], set[int], bool]:
    """Per entry, the spec of ``before`` it keeps (None: to compile), the indexes in ``before``
    of the kept specs, and whether any kept entry changed index (or the count changed)."""
    specs: list[EntrySpec | None] = [None] * len(entries)
    kept: set[int] = set()
    shifted = len(entries) != len(before)
    by_id: dict[str, EntrySpec] | None = None
    for i, entry in enumerate(entries):
        spec = before[i] if not shifted else None
        if spec is None or spec.entry.id != entry.id:
            if by_id is None:  # only once something moved: in-place edits keep every index
                by_id = {s.entry.id: s for s in before}
            spec = by_id.get(entry.id)
        if spec is not None and (spec.entry is entry or spec.entry == entry):
            shifted = shifted or spec.index != i
            specs[i] = spec if spec.index == i else replace(spec, index=i)
            kept.add(spec.index)
    return specs, kept, shifted


def _successor_of(previous: CompiledBook, book: ClassicBook) -> bool:
    """Whether ``book`` can be compiled from ``previous``: the same book under the same
    settings (every spec depends on them), its entry ids unique (specs are found by id)."""
    return (
        previous.book.id == book.id
        and previous.book.settings == book.settings
        and len({e.id for e in book.entries}) == len(book.entries)
        and len({s.entry.id for s in previous.specs}) == len(previous.specs)
    )


def _positive(spec: EntrySpec) -> dict[int, None]:
    """Key ids the entry uses positively (primary, secondary, additional): the only keys
    whose new hit can activate it (exclude keys and NOT logics can only block)."""
    refs = (*spec.primary, *spec.secondary, *(r for g in spec.additional for r in g))
    return dict.fromkeys(kid for kid, _ in refs)


def _kids(spec: EntrySpec) -> dict[int, None]:
    """Every key id the entry's spec refers to, once."""
    return _positive(spec) | dict.fromkeys(kid for kid, _ in spec.exclude)


def _owners(specs: Iterable[EntrySpec]) -> dict[int, tuple[int, ...]]:
    """Key id -> enabled entries that use it positively, in list order."""
    owners: dict[int, list[int]] = {}
    for spec in specs:
        if spec.entry.enabled:
            for kid in _positive(spec):
                owners.setdefault(kid, []).append(spec.index)
    return {kid: tuple(entries) for kid, entries in owners.items()}


def _owners_after(
    owners: dict[int, tuple[int, ...]], dropped: list[EntrySpec], fresh: list[EntrySpec]
) -> dict[int, tuple[int, ...]]:
    """:func:`_owners` after specs were swapped in place (``fresh`` took the indexes of
    ``dropped``; every other entry kept its index): only the keys of the swapped ones change."""
    changed: dict[int, set[int]] = {}
    for specs, keep in ((dropped, False), (fresh, True)):
        for spec in specs:
            if not spec.entry.enabled:
                continue
            for kid in _positive(spec):
                now = changed.setdefault(kid, set(owners.get(kid, ())))
                if keep:
                    now.add(spec.index)
                else:
                    now.discard(spec.index)
    updated = dict(owners)
    for kid, entries in changed.items():
        if entries:
            updated[kid] = tuple(sorted(entries))
        else:
            updated.pop(kid, None)
    return updated
