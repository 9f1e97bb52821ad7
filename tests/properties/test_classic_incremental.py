"""A classic book version compiled from the previous one (ADR 0008: no turn pays for an
edit) selects exactly what a compile from scratch selects — activations, order, trace, notes
and next state — after any sequence of edits: content, keys, additions, deletions, switches,
moves and book settings, one version per edit (so overlays and dropped keys pile up)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.properties.test_classic_properties import DECORATORS, KEYS, WORDS, entries
from worldbook.core.classic import (
    ClassicBook,
    ClassicEntry,
    ClassicSettings,
    ClassicTurn,
    keytable,
    select_classic,
)
from worldbook.core.classic.compiled import CompiledBook
from worldbook.core.classic.keys import RegexClock
from worldbook.core.classic.scanned_text import TextForms
from worldbook.core.types import Message
from worldbook.runtime.classic_cache import ClassicMatcherCache
from worldbook.testing import WordTokenizer

COUNT = WordTokenizer().count
EDITS = ["content", "key", "secondary", "decorator", "add", "delete", "disable", "enable", "move"]
EDITS += ["setting", "same"]


def _edited(
    book: ClassicBook, kind: str, n: int, word: str, key: str, decorator: str, serial: int
) -> ClassicBook:
    """``book`` after one edit (``serial`` makes ids and revisions of new entries unique)."""
    items = list(book.entries)
    i = n % len(items) if items else 0
    if kind == "add" or not items:
        # As the store does: only the new entry gets a position (between its neighbours).
        at = items[i - 1].position + 1 if i else -10 * serial
        new = ClassicEntry(f"n{serial}", book.id, f"New {serial}", f"{word} lore", position=at)
        items.insert(i, replace(new, keys=(key,), revision=str(serial)))
    elif kind == "content":
        items[i] = replace(items[i], content=f"{items[i].content} {word}", revision=str(serial))
    elif kind == "key":
        items[i] = replace(items[i], keys=(*items[i].keys[1:], key), revision=str(serial))
    elif kind == "secondary":
        items[i] = replace(items[i], secondary_keys=(word,), selective=True)
    elif kind == "decorator":
        items[i] = replace(items[i], decorators=(decorator,))
    elif kind in ("disable", "enable"):
        items[i] = replace(items[i], enabled=kind == "enable")
    elif kind == "delete":
        items.pop(i)
    elif kind == "move":  # to the top: only the moved entry's position changes
        moved = items.pop(i)
        top = items[0].position if items else moved.position
        items.insert(0, replace(moved, position=top - 10 * serial))
    elif kind == "setting":
        flip = ClassicSettings(whole_words=not book.settings.whole_words, scan_depth=n % 4)
        return replace(book, settings=replace(book.settings, **_some(flip, n)))
    return replace(book, entries=tuple(items))


def _some(flip: ClassicSettings, n: int) -> dict[str, Any]:
    fields = ("whole_words", "scan_depth", "case_sensitive", "recursive_scanning")
    name = fields[n % len(fields)]
    value = getattr(flip, name) if name in ("whole_words", "scan_depth") else bool(n % 2)
    return {name: value}


_edit = st.tuples(
    st.sampled_from(EDITS),
    st.integers(0, 30),
    st.sampled_from(WORDS),
    st.sampled_from(KEYS),
    st.sampled_from(DECORATORS),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    entries("a"),
    st.lists(_edit, min_size=1, max_size=8),
    st.lists(st.lists(st.sampled_from(WORDS), max_size=5), min_size=1, max_size=4),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, 2]),  # rebuild a base automaton: past the usual share, or at once
)
def test_a_version_compiled_from_the_previous_selects_what_a_rebuild_selects(
    first: tuple[ClassicEntry, ...],
    edits: list[tuple[str, int, str, str, str]],
    chat: list[list[str]],
    recursive: bool,
    whole_words: bool,
    rebase_min: int,
) -> None:
    base = ClassicSettings(scan_depth=3, recursive_scanning=recursive, whole_words=whole_words)
    spaced = tuple(replace(e, position=100 * e.position) for e in first)  # room to insert
    book = ClassicBook("a", "A", spaced, base, cache_key="v0", family="classic")
    messages = [Message("user" if i % 2 else "assistant", " ".join(w)) for i, w in enumerate(chat)]
    served = ClassicMatcherCache()
    with mock.patch.object(keytable, "REBASE_MIN", rebase_min):
        for serial, (kind, n, word, key, decorator) in enumerate(edits, start=1):
            select_classic(ClassicTurn((book,), messages, COUNT), None, served)
            book = _edited(book, kind, n, word, key, decorator, serial)
            book = replace(book, cache_key=f"v{serial}")
            turn = ClassicTurn((book,), messages, COUNT, chat_id="c", seed=serial)
            incremental = select_classic(turn, None, served)
            assert incremental == select_classic(turn, None, ClassicMatcherCache())
            _same_keys_found(served.get(book), CompiledBook(book), messages)
    # Every version whose settings did not change was compiled from the previous one.
    assert served.incremental_builds >= sum(1 for e in edits if e[0] != "setting")


def _found(book: CompiledBook, text: str) -> set[tuple[int, str]]:
    """The keys ``book`` finds in ``text``, by variant and form (ids differ between tables)."""
    table, found = book.table, set()
    for kid in book.scan(TextForms(text), RegexClock()):
        form = table.plain_keys.get(kid)
        found.add((table.variants[kid], form.form) if form else (-1, table.regex_keys[kid].source))
    return found


def _same_keys_found(served: CompiledBook, cold: CompiledBook, messages: list[Message]) -> None:
    """The key tables agree too: the same keys interned, the same keys found in every text
    (a key no entry uses any more must neither linger in the table nor be found)."""
    assert _forms(served) == _forms(cold)
    for text in [m.content for m in messages] + [s.text for s in cold.specs]:
        assert _found(served, text) == _found(cold, text)


def _forms(book: CompiledBook) -> tuple[set[tuple[int, str]], set[str]]:
    table = book.table
    plain = {(table.variants[k], f.form) for k, f in table.plain_keys.items()}
    return plain, {r.source for r in table.regex_keys.values()}


def test_an_edit_compiles_only_the_changed_entry() -> None:
    entries = tuple(
        ClassicEntry(f"e{i}", "a", f"E{i}", f"Lore {i}", position=i, keys=(f"key{i}", "shared"))
        for i in range(50)
    )
    book = ClassicBook("a", "A", entries, cache_key="v1", family="classic")
    served = ClassicMatcherCache()
    before = served.get(book)
    edited = replace(entries[7], keys=("fresh",), revision="2")
    after = served.get(replace(book, entries=(*entries[:7], edited, *entries[8:]), cache_key="v2"))
    assert served.builds == 2 and served.incremental_builds == 1
    assert all(
        a is b for i, (a, b) in enumerate(zip(before.specs, after.specs, strict=True)) if i != 7
    )
    assert "key7" not in {f.norm for f in after.table.plain_keys.values()}  # dropped
    no_family = ClassicMatcherCache()
    no_family.get(replace(book, family=""))
    no_family.get(replace(book, family="", cache_key="v2"))
    assert no_family.incremental_builds == 0  # without a family, every version from scratch
