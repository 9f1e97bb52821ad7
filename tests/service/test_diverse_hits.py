"""Diversified meaning hits and the plain bar of the full-score share on the in-memory fakes
(ADR 0021): near-duplicates give way to a message's second topic, strength 0 changes nothing,
and a referent link's lift does not push the turn's other topic out of full."""

from __future__ import annotations

import re
from typing import Any

from tests.service.test_aligned_view import _injected, _services, _turn
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import SemanticHit
from worldbook.service.indexing import index_now
from worldbook.service.services import Services
from worldbook.service.turn_books import with_lifts

DRAGONS = [
    EntryDraft(title=f"Ember {name}", lore="dragon fire cave mountain smoke ash " * 4 + name)
    for name in ("Hollow", "Roost", "Hold")
]
HARBOUR = EntryDraft(title="Tidewater", lore="harbour boats quay nets gulls tar " * 4)
TWO_TOPICS = ("The dragon fire cave mountain smoke ash, dragon fire cave smoke; and the harbour?",)


def _book(services: Services, drafts: list[EntryDraft]) -> str:
    """A book too large to travel whole whose fillers are all unlike each other (a book of
    near-identical fillers would centre every entry on the fillers' mean)."""
    book = services.books.create_book("alice", BookDraft(title="Lore"))
    words = [" ".join(f"w{i}x{j}" for j in range(150)) for i in range(60)]
    fillers = [EntryDraft(title=f"Ledger {i}", lore=w) for i, w in enumerate(words)]
    services.store.add_entries(book.id, [*fillers, *drafts])  # type: ignore[attr-defined]
    index_now(services)
    return book.id


def _scores(body: dict[str, Any]) -> dict[str, float]:
    found = (
        (r["title"], re.search(r"semantic: score (-?[0-9.]+)", r["reason"])) for r in body["trace"]
    )
    return {title: float(m.group(1)) for title, m in found if m}


def test_near_duplicates_give_way_to_the_second_topic() -> None:
    plain = _services(aligned=False)
    diverse = _services(aligned=False, diversity=3.0)
    before = _scores(_turn(plain, _book(plain, [*DRAGONS, HARBOUR]), *TWO_TOPICS))
    after = _scores(_turn(diverse, _book(diverse, [*DRAGONS, HARBOUR]), *TWO_TOPICS))
    dragons = [d.title for d in DRAGONS]
    assert all(before[d] > before["Tidewater"] for d in dragons)
    assert after["Tidewater"] == before["Tidewater"]  # unlike every dragon: no penalty
    assert sum(after[d] > after["Tidewater"] for d in dragons) == 1
    assert max(after[d] for d in dragons) == max(before[d] for d in dragons)


def test_strength_zero_selects_as_before() -> None:
    a = _services(aligned=False)
    b = _services(aligned=False, diversity=0.0, full_share_without_links=True)
    first = _turn(a, _book(a, [*DRAGONS, HARBOUR]), *TWO_TOPICS)
    second = _turn(b, _book(b, [*DRAGONS, HARBOUR]), *TWO_TOPICS)
    assert _injected(first) == _injected(second)
    assert [e["title"] for e in first["index"]] == [e["title"] for e in second["index"]]


def test_lifts_are_what_the_links_added() -> None:
    hits = [SemanticHit("b", "x", 0.5), SemanticHit("b", "y", 0.3), SemanticHit("b", "z", 0.25)]
    lifted = with_lifts(hits, {("b", "x"): 0.1, ("b", "y"): 0.3, ("b", "w"): 0.05})
    assert [round(h.lift, 6) for h in lifted] == [0.4, 0.0, 0.2]  # z joined at the floor
