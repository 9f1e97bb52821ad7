"""Lore selection on the sample books, against the labelled turn set (benchmarks/lore_turns.json).

Each book file is imported through the real importer into a fresh SQLite store, indexed, and
every turn written for it is answered by every method. For each gold entry we record whether
it reached the model in full, only as a world-index line (worldbook's methods only), or not at
all, and the lore tokens each method spent on the turn.

worldbook answers three ways side by side (docs/design/benchmarks.md): the books imported as world
books (meaning and names, one row per embedder), as classic books (``worldbook:classic``: keys only,
the SillyTavern / CCv3 rules), and as hybrid books (``worldbook:hybrid``: world selection plus
keyword activation, default embedder). Classic and hybrid run on the books that have keys.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldbook.adapters.formats import parse_book
from worldbook.adapters.formats.mapping import to_source_order
from worldbook.adapters.store import open_store
from worldbook.bench.peers import KeywordScan, PeerEntry, VectorStorage, list_order, st_budget
from worldbook.bench.xquad import short_name
from worldbook.core.selection import canon_budget
from worldbook.core.types import BookMode, Message, ModelProfile
from worldbook.errors import InvalidInput
from worldbook.ports import Embedder
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.importing import import_book
from worldbook.service.indexing import index_now
from worldbook.service.services import Services
from worldbook.service.turns import select_turn
from worldbook.settings import WorldbookSettings

OWNER = "bench"


@dataclass(frozen=True)
class LabelledTurn:
    id: str
    book: str  # file name of the book in the samples folder
    lang: str
    messages: tuple[Message, ...]
    gold: tuple[str, ...]  # entry titles as imported


@dataclass(frozen=True)
class Outcome:
    """What one method did with one turn."""

    full: frozenset[str]
    index: frozenset[str]
    tokens: int


def turn_fields(turn: dict[str, Any]) -> dict[str, Any]:
    """What every turn file (this one, the hard sets') writes of a turn: id, language, messages
    (role, content, name) and the gold entry titles."""
    messages = tuple(Message(m["role"], m["content"], m.get("name")) for m in turn["messages"])
    gold = tuple(turn["gold"])
    return {"id": turn["id"], "lang": turn["lang"], "messages": messages, "gold": gold}


def load_turns(path: Path) -> list[LabelledTurn]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [LabelledTurn(book=t["book"], **turn_fields(t)) for t in doc["turns"]]


def _components(
    settings: WorldbookSettings,
    embedder: Embedder,
    workdir: Path,
    aligned: Embedder | None = None,
) -> Components:
    local = settings.model_copy(update={"data_dir": workdir, "broker_url": None})
    store = open_store(f"sqlite:///{workdir / 'quality.db'}")
    return Components(local, store=store, embedder=embedder, start_queue=False, aligned=aligned)


def _import_all(
    services: Services, files: Sequence[Path], mode: BookMode = BookMode.WORLD
) -> dict[str, str]:
    """Import (and, but for classic books, index) every book; returns file name -> book id."""
    ids: dict[str, str] = {}
    for path in files:
        result = import_book(
            services,
            owner_id=OWNER,
            data=path.read_bytes(),
            filename=path.name,
            single_batch=False,
            mode=mode,
        )
        if mode is not BookMode.CLASSIC:
            index_now(services, book_id=result.book_id)
        ids[path.name] = result.book_id
    return ids


def keyed_books(files: Sequence[Path]) -> list[Path]:
    """The book files with at least one entry that has keys (classic and hybrid need them)."""
    return [f for f in files if any(e.keys for e in parse_book(f.read_bytes()).entries)]


def _peer_entries(services: Services, book_id: str, count: Callable[[str], int]) -> list[PeerEntry]:
    return [
        PeerEntry(
            title=r.title,
            content=r.lore,
            tokens=count(r.lore),
            keys=r.keys or r.aliases,
            secondary_keys=r.secondary_keys if r.selective else (),
            selective_logic=r.selective_logic,
            constant=r.constant or r.canon,
            order=to_source_order(r.order),  # the file's number: the peers rank as it does
            enabled=r.enabled,
        )
        for r in services.store.list_entries(book_id)
    ]


def _check_gold(turns: Sequence[LabelledTurn], titles: dict[str, set[str]]) -> None:
    for turn in turns:
        unknown = [g for g in turn.gold if g not in titles.get(turn.book, set())]
        if unknown:
            raise InvalidInput(
                f"turn {turn.id}: gold titles {unknown} are not entries of {turn.book}; fix the "
                "turn file.",
                field="gold",
            )


def worldbook_outcomes(
    settings: WorldbookSettings,
    embedder: Embedder,
    files: Sequence[Path],
    turns: Sequence[LabelledTurn],
    profile: ModelProfile,
    mode: BookMode = BookMode.WORLD,
) -> tuple[dict[str, Outcome], dict[str, list[PeerEntry]]]:
    """Answer every turn through ``select_turn`` on freshly imported (indexed) books."""
    with tempfile.TemporaryDirectory(prefix="wb-bench-quality-") as tmp:
        parts = _components(settings, embedder, Path(tmp))
        try:
            ids = _import_all(parts.services, files, mode)
            count = parts.services.token_counter(profile.tokenizer_id).tokenizer.count
            entries = {name: _peer_entries(parts.services, ids[name], count) for name in ids}
            _check_gold(turns, {name: {e.title for e in es} for name, es in entries.items()})
            outcomes: dict[str, Outcome] = {}
            for turn in turns:
                result = select_turn(
                    parts.services,
                    user_id=OWNER,
                    source=BookSource(book_ids=(ids[turn.book],)),
                    messages=turn.messages,
                    profile=profile,
                )
                sel = result.selection
                full = {e.ref.title for e in (*sel.canon, *sel.injected)}
                tokens = sel.canon_tokens + sum(e.tokens for e in sel.injected)
                tokens += sum(line.tokens for line in sel.index)
                outcomes[turn.id] = Outcome(
                    frozenset(full), frozenset(line.ref.title for line in sel.index), tokens
                )
        finally:
            parts.close()
    return outcomes, entries


def peer_outcomes(
    entries: dict[str, list[PeerEntry]],
    turns: Sequence[LabelledTurn],
    minilm: Embedder,
    profile: ModelProfile,
    settings: WorldbookSettings,
) -> dict[str, dict[str, Outcome]]:
    """The peers' methods on the same books (entries as imported) and turns."""
    budget = st_budget(profile.input_window)
    # List order gets what worldbook can spend at most: the canon budget (canon, whole books
    # and per-turn lore all come out of it; DESIGN §2 rules 3–5).
    order_budget = canon_budget(profile.input_window, settings.selection_rules())
    scans = {name: KeywordScan(es) for name, es in entries.items()}
    stores = {
        name: VectorStorage(es, lambda texts: minilm.embed_passages(texts))
        for name, es in entries.items()
    }
    out: dict[str, dict[str, Outcome]] = defaultdict(dict)

    def outcome(kept: Sequence[PeerEntry]) -> Outcome:
        return Outcome(frozenset(e.title for e in kept), frozenset(), sum(e.tokens for e in kept))

    for turn in turns:
        texts = [m.content for m in turn.messages]
        out["st-keyword"][turn.id] = outcome(scans[turn.book].select(texts, budget))
        kept = stores[turn.book].select(texts, lambda q: minilm.embed_queries([q])[0], budget)
        out["st-vector-storage"][turn.id] = outcome(kept)
        out["list-order"][turn.id] = outcome(list_order(entries[turn.book], order_budget))
    return out


def score(outcomes: dict[str, Outcome], turns: Sequence[LabelledTurn]) -> dict[str, Any]:
    """Shares of gold entries in full / only in the index / not at all; tokens per turn."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"full": 0, "index": 0, "missing": 0})
    tokens: list[int] = []
    for turn in turns:
        done = outcomes[turn.id]
        tokens.append(done.tokens)
        for gold in turn.gold:
            where = "full" if gold in done.full else "index" if gold in done.index else "missing"
            counts["all"][where] += 1
            counts[turn.lang][where] += 1

    def shares(c: dict[str, int]) -> dict[str, float]:
        total = sum(c.values()) or 1
        return {k: round(v / total, 4) for k, v in c.items()}

    return {
        **shares(counts["all"]),
        "gold": sum(counts["all"].values()),
        "tokens_per_turn": round(sum(tokens) / max(1, len(tokens)), 1),
        "per_language": {lang: shares(c) for lang, c in sorted(counts.items()) if lang != "all"},
    }


def run_lore(
    settings: WorldbookSettings,
    *,
    files: Sequence[Path],
    turns: Sequence[LabelledTurn],
    embedders: Sequence[tuple[str, Embedder]],
    minilm: Embedder,
    profile: ModelProfile,
    step: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Every method on every labelled turn of the given book files."""
    names = {f.name for f in files}
    turns = [t for t in turns if t.book in names]
    methods: dict[str, dict[str, Any]] = {}
    entries: dict[str, list[PeerEntry]] = {}
    for spec, embedder in embedders:
        step(f"lore turns worldbook:{short_name(spec)}")
        outcomes, entries = worldbook_outcomes(settings, embedder, files, turns, profile)
        methods[f"worldbook:{short_name(spec)}"] = score(outcomes, turns)
    keyed = keyed_books(files)
    keyed_turns = [t for t in turns if t.book in {f.name for f in keyed}]
    for mode in (BookMode.CLASSIC, BookMode.HYBRID):
        step(f"lore turns worldbook:{mode.value}")
        if keyed_turns and embedders:
            outcomes, _ = worldbook_outcomes(
                settings, embedders[0][1], keyed, keyed_turns, profile, mode
            )
            methods[f"worldbook:{mode.value}"] = score(outcomes, keyed_turns)
    step("lore turns: peers")
    for name, outcomes in peer_outcomes(entries, turns, minilm, profile, settings).items():
        methods[name] = score(outcomes, turns)
    return {
        "books": sorted(names),
        "keyed_books": sorted(f.name for f in keyed),
        "entries": {name: len(es) for name, es in entries.items()},
        "turns": len(turns),
        "languages": sorted({t.lang for t in turns}),
        "input_window": profile.input_window,
        "st_budget_tokens": st_budget(profile.input_window),
        "list_order_budget_tokens": canon_budget(profile.input_window, settings.selection_rules()),
        "methods": methods,
    }
