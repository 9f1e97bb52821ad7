"""The interned keys of a compiled classic book and the automata that find them.

A key id names one key in one matching variant (or one regex) for every entry that has it. A
new version of a book after an edit starts from a copy of the previous version's table
(:meth:`KeyTable.successor`): keys still used keep their ids, keys no entry uses any more are
dropped, new keys get new ids. Each variant's automaton is then the previous version's base
automaton — whose dropped key ids are skipped when found — plus a small overlay automaton of
the keys added since that base was built; the base is built again only when what it would skip
or the overlay grows past a share of it (:data:`REBASE_SHARE`). So a one-entry edit of a
20,000-key book costs an overlay of a few keys instead of 20,000 ``add_word`` calls, and every
scan finds exactly the keys a table built from scratch would (key ids aside, which nothing
outside the compiled book sees).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import ahocorasick

from worldbook.core.classic.keys import PlainForm, RegexClock, RegexKey, compile_regex, edges_ok
from worldbook.core.classic.scanned_text import TextForms

REBASE_SHARE = 8  # rebuild a variant's base automaton when skipped + overlay > base / 8
REBASE_MIN = 256  # ... and above this many keys (small books rebuild on every change)


def _automaton(words: Iterable[tuple[str, int]]) -> ahocorasick.Automaton | None:
    automaton = ahocorasick.Automaton()
    for form, kid in words:
        automaton.add_word(form, kid)
    if not len(automaton):
        return None
    automaton.make_automaton()
    return automaton


@dataclass(frozen=True, slots=True)
class VariantAutomata:
    """One variant's keys: a base automaton (``gone``: its key ids no longer in use) and an
    overlay automaton of the keys added since the base was built."""

    base: ahocorasick.Automaton | None
    base_size: int
    gone: frozenset[int]
    overlay: ahocorasick.Automaton | None
    overlay_kids: tuple[int, ...]

    @property
    def automata(self) -> tuple[ahocorasick.Automaton, ...]:
        return tuple(a for a in (self.base, self.overlay) if a is not None)


class KeyTable:
    """Key ids, their forms, how many entry specs use each, and the automata."""

    __slots__ = (
        "added",
        "automata",
        "checked",
        "next_id",
        "plain_ids",
        "plain_keys",
        "regex_ids",
        "regex_keys",
        "uses",
        "variants",
    )

    def __init__(self) -> None:
        self.plain_ids: dict[tuple[int, str], int] = {}  # (variant, form) -> key id
        self.regex_ids: dict[str, int] = {}  # written key -> key id
        self.plain_keys: dict[int, PlainForm] = {}  # key id -> form (plain keys)
        self.regex_keys: dict[int, RegexKey] = {}  # key id -> compiled regex
        self.uses: dict[int, int] = {}  # key id -> entry specs that refer to it
        self.variants: dict[int, int] = {}  # plain key id -> its variant
        self.checked: set[int] = set()  # plain key ids whose edges are verified on a hit
        self.next_id = 0
        self.automata: dict[int, VariantAutomata] = {}
        self.added: list[int] = []  # plain key ids interned since the table was made

    def successor(self) -> KeyTable:
        """A copy to intern the next version's changed entries in (this one is not touched)."""
        table = KeyTable()
        table.plain_ids = dict(self.plain_ids)
        table.regex_ids = dict(self.regex_ids)
        table.plain_keys = dict(self.plain_keys)
        table.regex_keys = dict(self.regex_keys)
        table.uses = dict(self.uses)
        table.variants = dict(self.variants)
        table.checked = set(self.checked)
        table.next_id = self.next_id
        table.automata = self.automata
        return table

    # -- interning --------------------------------------------------------------------------

    def plain(self, variant: int, form: PlainForm) -> int:
        kid = self.plain_ids.get((variant, form.form))
        if kid is None:
            kid = self.plain_ids[(variant, form.form)] = self._new_id()
            self.plain_keys[kid] = form
            self.variants[kid] = variant
            self.added.append(kid)
            if form.needs_check:
                self.checked.add(kid)
        return kid

    def regex(self, written: str, shape: tuple[str, str]) -> tuple[int, RegexKey]:
        kid = self.regex_ids.get(written)
        if kid is None:
            kid = self.regex_ids[written] = self._new_id()
            self.regex_keys[kid] = compile_regex(written, *shape)
        return kid, self.regex_keys[kid]

    def _new_id(self) -> int:
        kid = self.next_id
        self.next_id += 1
        return kid

    def use(self, kids: Iterable[int], step: int) -> None:
        """Count (``step`` 1) or uncount (-1) one entry spec's key ids."""
        uses = self.uses
        for kid in kids:
            uses[kid] = uses.get(kid, 0) + step

    def drop_unused(self, candidates: Iterable[int]) -> list[tuple[int, int]]:
        """Forget the keys of ``candidates`` no entry spec uses any more; the (key id,
        variant) pairs of the plain ones."""
        dropped: list[tuple[int, int]] = []
        for kid in dict.fromkeys(candidates):
            if self.uses.get(kid, 0) > 0:
                continue
            self.uses.pop(kid, None)
            form = self.plain_keys.pop(kid, None)
            if form is not None:
                variant = self.variants.pop(kid)
                del self.plain_ids[(variant, form.form)]
                self.checked.discard(kid)
                dropped.append((kid, variant))
            else:
                del self.regex_keys[kid]
                written = next(w for w, k in self.regex_ids.items() if k == kid)
                del self.regex_ids[written]
        return dropped

    # -- automata ---------------------------------------------------------------------------

    def build_automata(self) -> None:
        """Every variant's automaton from scratch (a first compile)."""
        self.automata = {}
        for variant in set(self.variants.values()):
            self.automata[variant] = self._base(variant)
        self.added = []

    def _base(self, variant: int) -> VariantAutomata:
        kids = [k for k, v in self.variants.items() if v == variant]
        base = _automaton((self.plain_keys[k].form, k) for k in kids)
        return VariantAutomata(base, len(kids), frozenset(), None, ())

    def update_automata(self, added: Iterable[int], removed: Iterable[tuple[int, int]]) -> None:
        """This version's automata from the previous version's, given the plain key ids added
        and the (key id, variant) pairs dropped since (see the module doc)."""
        new: dict[int, list[int]] = {}
        for kid in added:
            new.setdefault(self.variants[kid], []).append(kid)
        old: dict[int, set[int]] = {}
        for kid, variant in removed:
            old.setdefault(variant, set()).add(kid)
        automata = dict(self.automata)
        for variant in set(new) | set(old):
            made = self._updated(variant, automata.get(variant), new.get(variant, []), old)
            if made is None:
                automata.pop(variant, None)
            else:
                automata[variant] = made
        self.automata = automata
        self.added = []

    def _updated(
        self,
        variant: int,
        before: VariantAutomata | None,
        added: list[int],
        removed: dict[int, set[int]],
    ) -> VariantAutomata | None:
        if before is None:
            return self._base(variant)
        dropped = removed.get(variant, set())
        in_overlay = set(before.overlay_kids)
        gone = before.gone | {k for k in dropped if k not in in_overlay}
        overlay = (*(k for k in before.overlay_kids if k not in dropped), *added)
        if before.base_size - len(gone) + len(overlay) == 0:
            return None
        if len(gone) + len(overlay) > max(REBASE_MIN, before.base_size // REBASE_SHARE):
            return self._base(variant)
        made = _automaton((self.plain_keys[k].form, k) for k in overlay)
        return VariantAutomata(before.base, before.base_size, gone, made, overlay)

    # -- scanning ---------------------------------------------------------------------------

    def scan(self, text: TextForms, clock: RegexClock) -> frozenset[int]:
        """Key ids found in one text (one message, or one entry's content)."""
        found: set[int] = set()
        for variant, automata in self.automata.items():
            form = text.form(variant)
            gone = automata.gone
            for automaton in automata.automata:
                for _end, kid in automaton.iter(form):
                    if kid in found or kid in gone:
                        continue
                    if kid in self.checked and not edges_ok(
                        text.norm(variant >= 2), self.plain_keys[kid]
                    ):
                        continue
                    found.add(kid)
        for kid, key in self.regex_keys.items():
            if key.pattern is not None and clock.search(key, text.raw):
                found.add(kid)
        return frozenset(found)
