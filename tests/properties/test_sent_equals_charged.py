"""What is sent is what is charged (DESIGN §2 budget table): over random world, classic and
hybrid books, windows and messages, the lore the rendered prompt carries (OpenAI ``messages``
and Anthropic ``system``) is exactly the selection's texts, their counts under the turn's
tokenizer are the reported per-turn and lorebook tokens, within their budgets; no per-turn
entry passes the 800-token cut; ``truncated`` holds exactly when the text is shorter than the
entry's lore as the turn sees it (macros filled), which the lookup tool returns.

The same check runs on the preview, the HTTP answer and the CLI's JSON
(:mod:`tests.sent_lore`; ``tests/api/test_sent_lore.py``, ``tests/cli/test_cli.py``).
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.sent_lore import CL100K, CLASSIC, WORLD_PER_TURN, check_sent_equals_charged
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import BookMode, Message, ModelProfile
from worldbook.service.cast import BookSource, CastMember
from worldbook.service.turns import lookup_entry, preview, select_turn
from worldbook.testing import StaticTokenizers, fake_services

SENTENCES = [
    "In year {n} of the chronicle the northern kings fought over the salt roads.",
    "{{user}} remembers how {{char}} wept at the fords in the winter of {n}.",
    "Les rois du nord ont brûlé {n} villes le long du fleuve.",
    "東京の夜は長く、{n}番目の冬が来た。",
    "{{random::Red::Blue::Gold}} banners flew over gate {n}.",
    "{{// an author's note the model never reads, about draft {n} }}",
    "Numbers {n}, {n}1 and 3.14 appear, e.g. in ledgers without a stop",
]


def lore_text(seed: int, tokens: int) -> str:
    """About ``tokens`` tokens of lore from a seed (a small example for Hypothesis to shrink)."""
    rng = random.Random(seed)
    parts: list[str] = []
    while CL100K.count(" ".join(parts)) < tokens:
        parts.append(rng.choice(SENTENCES).replace("{n}", str(rng.randint(1, 999))))
    return " ".join(parts)


@st.composite
def books(draw: st.DrawFn, letter: str) -> dict[str, Any]:
    mode = draw(
        st.sampled_from([BookMode.WORLD, BookMode.WORLD, BookMode.HYBRID, BookMode.CLASSIC])
    )
    count = draw(st.integers(1, 30))
    entries = []
    for i in range(count):
        size = draw(st.sampled_from([25, 80, 300, 900, 1100, 1400]))
        keyed = mode is not BookMode.WORLD and draw(st.booleans())
        entries.append(
            EntryDraft(
                title=f"Topic {i} of realm {letter}",
                lore=lore_text(draw(st.integers(0, 2**16)), size),
                aliases=[f"Alias{i}{letter}"] if draw(st.booleans()) else [],
                canon=draw(st.integers(0, 9)) == 0,
                enabled=draw(st.integers(0, 9)) > 0,
                keys=[f"key{i}{letter}"] if keyed else [],
                constant=mode is BookMode.CLASSIC and draw(st.integers(0, 6)) == 0,
            )
        )
    return {"mode": mode, "entries": entries}


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    shelf = [draw(books(letter)) for letter in "ABC"[: draw(st.integers(1, 3))]]
    letters = st.sampled_from("ABC"[: len(shelf)])
    named = draw(st.lists(st.tuples(st.integers(0, 12), letters), max_size=4))
    keys = draw(st.lists(st.tuples(st.integers(0, 29), letters), max_size=3))
    text = "Read me " + " and ".join(f"Topic {i} of realm {b}" for i, b in named)
    text += " " + " ".join(f"key{i}{b}" for i, b in keys) + " all of it."
    reply = draw(st.sampled_from(["", "Ah, Alias3A, a long story.", "Topic 1 of realm B?"]))
    return {
        "books": shelf,
        "messages": [Message("user", text)]
        + ([Message("assistant", reply), Message("user", "Go on.")] if reply else []),
        "window": draw(st.sampled_from([2048, 4096, 8192, 16384, 60000])),
        "user_name": draw(st.sampled_from([None, "Ari"])),
        "char": draw(st.sampled_from([None, "Sakana"])),
        "tools": draw(st.booleans()),
        "preview": draw(st.booleans()),
    }


def _services():  # type: ignore[no-untyped-def]
    services = fake_services()
    services.tokenizers = StaticTokenizers({"tiktoken:cl100k_base": CL100K})
    return services


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(turns())
def test_what_is_sent_is_what_is_charged(case: dict[str, Any]) -> None:
    services = _services()
    ids = []
    for i, shelf in enumerate(case["books"]):
        made = services.store.create_book("alice", BookDraft(title=f"Book {i}", mode=shelf["mode"]))
        services.store.add_entries(made.id, shelf["entries"])
        ids.append(made.id)
    cast = (CastMember("c1", case["char"]),) if case["char"] else ()
    source = BookSource(book_ids=tuple(ids), characters=cast)
    profile = ModelProfile(
        input_window=case["window"],
        tokenizer_id="tiktoken:cl100k_base",
        supports_tools=case["tools"],
    )
    common: dict[str, Any] = {"user_id": "alice", "source": source, "profile": profile}
    if case["preview"]:
        sample = case["messages"]
        result = preview(services, messages=sample, user_name=case["user_name"], **common)
    else:
        result = select_turn(
            services, messages=case["messages"], user_name=case["user_name"], **common
        )
    body: dict[str, Any] = result.to_json()
    check_sent_equals_charged(body)
    vias = {e["via"] for e in body["injected"]}
    event("a cut entry" if any(e["truncated"] for e in body["injected"]) else "no cut")
    event("classic lore" if vias & CLASSIC else "no classic lore")
    event("world index" if body["index"] else "no index")

    # truncated ⇔ shorter than the lore the turn sees, which is what the lookup tool returns.
    for entry in body["injected"]:
        if entry["via"] not in WORLD_PER_TURN:
            continue
        _book, _id, lore = lookup_entry(
            services,
            title=entry["title"],
            user_name=case["user_name"],
            stand_ins=case["preview"],
            **common,
        )
        if entry["truncated"]:
            assert len(entry["text"]) < len(lore) and lore.startswith(entry["text"])
        else:
            assert entry["text"] == lore
    if case["user_name"] or case["preview"]:
        rendered = "".join(m["content"] for m in body["messages"])
        assert "{{user}}" not in rendered
