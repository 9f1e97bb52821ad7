"""The hard evaluation sets (``benchmarks/hard_set/<set>/``): real roleplay turns on a large
multilingual book with confuser families (docs/design/benchmarks.md).

Each set is one world book (``world.json``, SillyTavern World Info, imported with the real
importer into a fresh SQLite store and indexed with the given embedder) and labelled turns
(``turns.json``): 3–5 messages with roles and speakers, a ``kind`` (what makes it hard), the
language of the conversation, ``gold`` entries (what the reply needs) and ``avoid`` entries (the
confusers that must not take a full slot). Every turn goes through
:func:`worldbook.service.turns.select_turn`, the peers' methods run beside it
(``worldbook.bench.peers``), and everything is reported per kind and per language: gold in
full (share of gold entries injected in full, canon counts), gold in full or index (counting
world-index lines too), avoid in full (confuser entries injected in full, lower is better),
index lines and lore tokens per turn; plus diagnostics for worldbook's misses (why each missed
gold entry was left out, from the selection trace) and the same-language pull of meaning-based
full slots.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.bench.chat_replay import chat_turn
from worldbook.bench.peers import st_budget
from worldbook.bench.quality import (
    LabelledTurn,
    Outcome,
    _components,
    _import_all,
    _peer_entries,
    peer_outcomes,
    turn_fields,
)
from worldbook.core.selection import canon_budget
from worldbook.core.types import Decision, Message, ModelProfile, Selection, Via
from worldbook.errors import InvalidInput
from worldbook.ports import BookVectors, Embedder, Vectors
from worldbook.service.cast import BookSource
from worldbook.service.services import Services
from worldbook.settings import WorldbookSettings

OWNER = "bench"
KIND_LABELS = {
    "reply_named": "the character's reply named it",
    "drift": "drift (the talk moved from A to B)",
    "nickname": "a nickname close to an alias",
    "two_entries": "needs two entries",
    "confuser": "pick the right one among similar entries",
    "described": "described, not named",
    "follow_up": "follow-up (referent only in earlier messages)",
    "cross_lingual": "asked in one language, lore in another",
    "inflected": "inflected (declined) name",
}


@dataclass(frozen=True)
class HardTurn:
    id: str
    kind: str
    lang: str
    messages: tuple[Message, ...]
    gold: tuple[str, ...]
    avoid: tuple[str, ...]


@dataclass(frozen=True)
class HardSet:
    name: str
    world: Path
    turns: tuple[HardTurn, ...]
    entry_lang: dict[str, str]  # entry title -> language the lore is written in


@dataclass(frozen=True)
class TurnDetail:
    """What worldbook did with one turn, beyond the outcome: how each full entry came in and
    why each gold entry that missed was left out."""

    via: dict[str, str]  # full entry title -> via (canon, literal, semantic, order)
    missed: dict[str, str]  # gold title -> trace reason (or "not considered")


def load_hard_set(folder: Path) -> HardSet:
    """A set folder built by ``benchmarks/hard_set/build.py``."""
    doc = json.loads((folder / "turns.json").read_text(encoding="utf-8"))
    turns = tuple(
        HardTurn(kind=t["kind"], avoid=tuple(t.get("avoid", ())), **turn_fields(t))
        for t in doc["turns"]
    )
    return HardSet(folder.name, folder / doc["book"], turns, dict(doc["entry_lang"]))


def _labelled(hard: HardSet) -> list[LabelledTurn]:
    """The turns in the shape the peers' runner takes (one book per set)."""
    return [
        LabelledTurn(t.id, hard.world.name, t.lang, t.messages, (*t.gold, *t.avoid))
        for t in hard.turns
    ]


def _detail(selection: Selection, gold: Sequence[str]) -> TurnDetail:
    via = {e.ref.title: Via.CANON.value for e in selection.canon}
    via.update({e.ref.title: e.via.value for e in selection.injected})
    shown = set(via) | {line.ref.title for line in selection.index}
    reasons = {r.title: r.reason for r in selection.trace if r.decision is Decision.LEFT_OUT}
    missed = {g: reasons.get(g, "not considered") for g in gold if g not in shown}
    return TurnDetail(via, missed)


Variant = tuple[str, Mapping[str, Any]]
"""A named worldbook configuration: settings overrides (``""``: the settings as given)."""

BEFORE_ISSUE_16: dict[str, Any] = {
    "language_correction": False,
    "query_recency_decay": 0.45,
    "full_score_share": 0.0,
    "index_reserve_lines": 0,
    "index_gist_tokens_max": 40,
    "index_title_fallback": False,
}
"""The engine's settings before the hard sets were measured (ADR 0003, ADR 0013; literal hits
were then in book order, a rule change with no setting)."""

STEMMERS = ("russian", "german", "french", "spanish", "italian", "portuguese")
"""The Snowball stemmers of the inflected-name tier as measured (the hard sets' inflected
languages and their neighbours)."""

ABLATIONS: tuple[Variant, ...] = (
    ("before issue 16", BEFORE_ISSUE_16),
    ("without the language correction", {"language_correction": False}),
    ("recency decay 0.45", {"query_recency_decay": 0.45}),
    ("without the full-score share", {"full_score_share": 0.0}),
    ("without the index reserve", {"index_reserve_lines": 0}),
    ("40-token gists", {"index_gist_tokens_max": 40}),
    ("without title-only index lines", {"index_title_fallback": False}),
    ("with the inflected-name tier", {"literal_stem_languages": STEMMERS}),
)
"""Each mechanism of ADR 0003 and 0013 taken out of the defaults, one at a time (what each one
bought), and the optional inflected-name tier put in."""

RowTransform = Callable[[Vectors, list[str]], Vectors]
"""``transform(vectors, texts)``: applied to a book's stored entry vectors (with each row's
entry's title and lore) when its in-memory index is built; the stored ones stay raw."""
Prepare = Callable[[Services, str], None]  # run on a variant's imported book (ADR 0023)


def _transformed_index(parts: Services, rows: RowTransform) -> FaissIndex:
    def load(book_id: str) -> BookVectors:
        ids, vectors, hashes = parts.store.load_book_vectors(book_id, parts.model_id)
        if not ids:
            return BookVectors(ids, vectors, hashes)
        texts = {r.id: f"{r.title}\n{r.lore}" for r in parts.store.list_entries(book_id)}
        return BookVectors(ids, rows(vectors, [texts[i] for i in ids]), hashes)

    return FaissIndex(load, max_books=parts.settings.index_cache_books)


def worldbook_run(
    settings: WorldbookSettings,
    embedder: Embedder,
    hard: HardSet,
    profile: ModelProfile,
    rows: RowTransform | None = None,
    overrides: Mapping[str, Any] | None = None,
    aligned: Embedder | None = None,
    replay: bool = False,
    prepare: Prepare | None = None,
) -> tuple[dict[str, Outcome], dict[str, TurnDetail], dict[str, Any]]:
    """Every turn through ``select_turn`` on the freshly imported, indexed world (with the
    settings ``overrides`` of a variant and, given ``aligned``, the aligned view). ``replay``:
    each turn is a chat of its own whose earlier user messages were turns before it (real
    turns with the chat's id, so the request log holds what they selected). ``prepare`` is run
    on the imported, indexed book first (glosses, ADR 0023)."""
    with tempfile.TemporaryDirectory(prefix="wb-bench-hard-") as tmp:
        local = settings.model_copy(update=dict(overrides or {}))
        parts = _components(local, embedder, Path(tmp), aligned)
        if rows is not None:
            parts.services.vector_index = _transformed_index(parts.services, rows)
        try:
            book_id = _import_all(parts.services, [hard.world])[hard.world.name]
            if prepare is not None:
                prepare(parts.services, book_id)
            count = parts.services.token_counter(profile.tokenizer_id).tokenizer.count
            entries = _peer_entries(parts.services, book_id, count)
            _check_titles(hard, {e.title for e in entries})
            outcomes: dict[str, Outcome] = {}
            details: dict[str, TurnDetail] = {}
            for turn in hard.turns:
                chat_id = f"chat-{turn.id}" if replay else None
                source = BookSource(book_ids=(book_id,))
                sel = chat_turn(parts.services, OWNER, source, turn.messages, profile, chat_id)
                full = {e.ref.title for e in (*sel.canon, *sel.injected)}
                tokens = sel.canon_tokens + sum(e.tokens for e in sel.injected)
                tokens += sum(line.tokens for line in sel.index)
                index = frozenset(line.ref.title for line in sel.index)
                outcomes[turn.id] = Outcome(frozenset(full), index, tokens)
                details[turn.id] = _detail(sel, turn.gold)
            book = {
                "entries": len(entries),
                "canon_tokens": sum(e.tokens for e in entries if e.constant),
                "lore_tokens": sum(e.tokens for e in entries),
                "_peer_entries": entries,
            }
        finally:
            parts.close()
    return outcomes, details, book


def _check_titles(hard: HardSet, titles: set[str]) -> None:
    for turn in hard.turns:
        unknown = [t for t in (*turn.gold, *turn.avoid) if t not in titles]
        if unknown:
            raise InvalidInput(
                f"turn {turn.id}: {unknown} are not entries of {hard.world.name} as imported; "
                "rebuild the set (benchmarks/hard_set/build.py).",
                field="gold",
            )


def score(outcomes: dict[str, Outcome], turns: Sequence[HardTurn]) -> dict[str, Any]:
    """Gold in full / in full or index, avoid in full, index lines and tokens per turn:
    overall, per kind and per language."""

    def empty() -> dict[str, float]:
        return defaultdict(float)

    groups: dict[str, dict[str, float]] = defaultdict(empty)
    for turn in turns:
        done = outcomes[turn.id]
        for key in ("all", f"kind:{turn.kind}", f"lang:{turn.lang}"):
            g = groups[key]
            g["turns"] += 1
            g["gold"] += len(turn.gold)
            g["full"] += sum(1 for t in turn.gold if t in done.full)
            g["shown"] += sum(1 for t in turn.gold if t in done.full or t in done.index)
            g["avoid"] += len(turn.avoid)
            g["avoid_full"] += sum(1 for t in turn.avoid if t in done.full)
            g["index_lines"] += len(done.index)
            g["tokens"] += done.tokens

    def summary(g: dict[str, float]) -> dict[str, float]:
        return {
            "turns": int(g["turns"]),
            "gold": int(g["gold"]),
            "gold_full": round(g["full"] / max(1, g["gold"]), 4),
            "gold_full_or_index": round(g["shown"] / max(1, g["gold"]), 4),
            "avoid_full": round(g["avoid_full"] / max(1, g["avoid"]), 4),
            "avoid": int(g["avoid"]),
            "avoid_full_n": int(g["avoid_full"]),
            "index_lines_per_turn": round(g["index_lines"] / max(1, g["turns"]), 2),
            "tokens_per_turn": round(g["tokens"] / max(1, g["turns"]), 1),
        }

    return {
        **summary(groups["all"]),
        "per_kind": {k[5:]: summary(v) for k, v in sorted(groups.items()) if k[:5] == "kind:"},
        "per_language": {k[5:]: summary(v) for k, v in sorted(groups.items()) if k[:5] == "lang:"},
    }


def diagnose(
    hard: HardSet, outcomes: dict[str, Outcome], details: dict[str, TurnDetail]
) -> dict[str, Any]:
    """Why gold entries miss, and the same-language pull of meaning-based full slots."""
    reasons: Counter[str] = Counter()
    for turn in hard.turns:
        for why in details[turn.id].missed.values():
            reasons[_reason_class(why)] += 1
    vias: Counter[str] = Counter()
    for turn in hard.turns:
        for title in turn.gold:
            if title in outcomes[turn.id].full:
                vias[details[turn.id].via.get(title, "?")] += 1
    base = Counter(hard.entry_lang.values())
    total = sum(base.values())
    pull: dict[str, dict[str, float]] = {}
    for lang in sorted({t.lang for t in hard.turns}):
        slots = same = 0
        for turn in (t for t in hard.turns if t.lang == lang):
            for title, via in details[turn.id].via.items():
                if via == Via.SEMANTIC.value:
                    slots += 1
                    same += hard.entry_lang.get(title) == lang
        pull[lang] = {
            "semantic_full_slots": slots,
            "same_language": same,
            "same_language_entries_share": round(base.get(lang, 0) / total, 4),
        }
    return {
        "missed_gold_by_reason": dict(reasons.most_common()),
        "gold_in_full_by_via": dict(vias.most_common()),
        "same_language_pull": pull,
    }


def _reason_class(why: str) -> str:
    """A short class for a trace reason (the reasons are written in ``core/selection.py``)."""
    if why == "not considered":
        return "never ranked (no literal hit, not among the nearest entries searched)"
    if "over the literal cap" in why:
        return "literal hit over the cap"
    if "over budget: index line" in why:
        return "index starved: ranked in the index window, its line did not fit the budget"
    if "index topics" in why:
        return "ranked below the index topics"
    return why.split(";")[-1].strip()[:60]


def run_hard_set(
    settings: WorldbookSettings,
    *,
    folders: Sequence[Path],
    embedders: Sequence[tuple[str, Embedder]],
    minilm: Embedder | None,
    profile: ModelProfile,
    step: Callable[[str], None] = lambda _: None,
    row_transforms: dict[str, RowTransform] | None = None,
    variants: Sequence[Variant] = (("", {}),),
    aligned: Embedder | None = None,
    replay: bool = False,
    prepare: dict[str, Prepare] | None = None,
) -> dict[str, Any]:
    """Every method on every turn of each set; a dict ready for ``results.json``.

    Each embedder runs under each variant (method ``worldbook:<embedder>`` for ``""``, else
    ``worldbook:<embedder> <variant>``). ``row_transforms`` maps a method name to a transform
    of the book's entry vectors applied when its index is built (an experiment hook);
    ``replay``: each turn's earlier user messages are turns of its chat first; ``prepare`` maps
    a variant's label to a hook run on its book before the turns."""
    out: dict[str, Any] = {
        "input_window": profile.input_window,
        "tokenizer": profile.tokenizer_id,
        "st_budget_tokens": st_budget(profile.input_window),
        "list_order_budget_tokens": canon_budget(profile.input_window, settings.selection_rules()),
        "sets": {},
    }
    for folder in folders:
        hard = load_hard_set(folder)
        methods: dict[str, Any] = {}
        diagnostics: dict[str, Any] = {}
        per_turn: dict[str, Any] = {}
        book: dict[str, Any] = {}
        for (name, embedder), (label, overrides) in product(embedders, variants):
            method = f"worldbook:{name}" + (f" {label}" if label else "")
            step(f"hard set {hard.name}: {method}")
            rows = (row_transforms or {}).get(method)
            hook = (prepare or {}).get(label)
            outcomes, details, book = worldbook_run(
                settings, embedder, hard, profile, rows, overrides, aligned, replay, hook
            )
            methods[method] = score(outcomes, hard.turns)
            diagnostics[method] = diagnose(hard, outcomes, details)
            per_turn[method] = _per_turn(hard, outcomes, details)
        if minilm is not None and book:
            step(f"hard set {hard.name}: peers")
            entries = {hard.world.name: book["_peer_entries"]}
            found = peer_outcomes(entries, _labelled(hard), minilm, profile, settings)
            for name, outcomes in found.items():
                methods[name] = score(outcomes, hard.turns)
        out["sets"][hard.name] = _set_result(hard, book) | {
            "methods": methods,
            "diagnostics": diagnostics,
            "_per_turn": per_turn,
        }
    return out


def _per_turn(
    hard: HardSet, outcomes: dict[str, Outcome], details: dict[str, TurnDetail]
) -> dict[str, Any]:
    """What one method put in full and in the index on each turn, and what it missed."""
    return {
        t.id: {
            "full": sorted(outcomes[t.id].full),
            "index": sorted(outcomes[t.id].index),
            "missed": details[t.id].missed,
        }
        for t in hard.turns
    }


def _set_result(hard: HardSet, book: dict[str, Any]) -> dict[str, Any]:
    """The set's own figures (its book and its turns), before the methods' scores."""
    langs = Counter(hard.entry_lang.values())
    return {
        "entries": book.get("entries"),
        "entries_by_language": dict(langs.most_common()),
        "canon_tokens": book.get("canon_tokens"),
        "lore_tokens": book.get("lore_tokens"),
        "turns": len(hard.turns),
        "turns_by_kind": dict(Counter(t.kind for t in hard.turns)),
        "turns_by_language": dict(Counter(t.lang for t in hard.turns)),
    }
