"""The invariant of what is sent and what is charged (DESIGN §2 budget table), checked on a
selection's JSON answer by the property test and through every interface (library, preview,
HTTP, CLI), and the "Long Chronicle" book that once reached the model uncut."""

from __future__ import annotations

from typing import Any

from worldbook.adapters.tokenizers.registry import get_tokenizer
from worldbook.core.rendering import INDEX_HEADER, TURN_HEADER
from worldbook.core.tokens import Tokenizer

CL100K = get_tokenizer("cl100k_base")
PER_ENTRY_CAP = 800
WORLD_PER_TURN = {"literal", "semantic", "order"}
CLASSIC = {"constant", "keyword", "recursion"}
CHRONICLE_MESSAGE = "Read me the Long Chronicle, all of it."


def chronicle_entries() -> list[dict[str, Any]]:
    """34 entries: a canon entry, 32 short ones, and "The Long Chronicle" of about 1,260
    cl100k tokens with ``{{user}}`` and ``{{char}}`` in its lore and one in a short entry's
    first sentence (its world-index line). At window 8,192 the per-turn budget is under 800,
    so the named chronicle must be cut to what is left."""
    canon = {"title": "The Realm", "lore": "The realm is old and its roads are long. " * 10}
    short = [
        {
            "title": f"Town {i} on the river",
            "lore": (
                f"{{{{user}}}} once slept in town {i}, a quiet place of mills and bridges. "
                "Its people fish, trade salt and keep old stones. " * 3
            ),
        }
        for i in range(32)
    ]
    chronicle = " ".join(
        f"In year {y} of the chronicle {{{{user}}}} watched {{{{char}}}} and the northern "
        "kings fight over the salt roads and the river fords, and many towns burned."
        for y in range(36)
    )
    return [
        {**canon, "canon": True},
        *short,
        {"title": "The Long Chronicle", "lore": chronicle, "aliases": ["the chronicle"]},
    ]


def per_turn_items(text: str) -> list[str]:
    """The lore texts and index lines inside the rendered per-turn system text, in order (the
    headers and ``## title`` lines taken off; test lore never holds a blank line + ``##``)."""
    items: list[str] = []
    body, _, index = text.partition(INDEX_HEADER)
    body = body.rstrip("\n")
    if body:
        assert body.startswith(TURN_HEADER + "\n\n## ")
        for block in body[len(TURN_HEADER) + 2 :].split("\n\n## "):
            _title, _, lore = block.partition("\n")
            items.append(lore)
    if index:
        lines = index.split("\n")[2:]  # the header's remainder and the intro line
        items += [line.removeprefix("- ") for line in lines]
    return items


def check_sent_equals_charged(body: dict[str, Any], tokenizer: Tokenizer = CL100K) -> None:
    """The invariant on one selection's JSON answer (library ``to_json``, HTTP, CLI)."""
    injected = body["injected"]
    per_turn = [e for e in injected if e["via"] in WORLD_PER_TURN]
    classic = [e for e in injected if e["via"] in CLASSIC]
    for entry in injected:
        assert tokenizer.count(entry["text"]) == entry["cost"], entry["title"]
    for entry in per_turn:
        assert entry["cost"] <= PER_ENTRY_CAP, entry["title"]
    charged = sum(e["cost"] for e in per_turn) + sum(line["cost"] for line in body["index"])
    assert charged == body["per_turn_tokens"] <= body["per_turn_budget"]
    assert sum(e["cost"] for e in classic) == body["lorebook"]["tokens"]
    assert body["lorebook"]["tokens"] <= body["lorebook"]["budget"]

    # What the model receives: the per-turn system text carries exactly those texts and lines.
    messages = body["messages"]
    sent = messages[-1]["content"] if per_turn or body["index"] else ""
    if sent:
        assert messages[-1]["role"] == "system"
        items = per_turn_items(sent)
        wanted = [e["text"] for e in per_turn] + [line["line"] for line in body["index"]]
        # An index line in a group chat ends with its "[From …'s world]" label.
        unlabelled = [i.split(" [From ")[0] for i in items]
        assert unlabelled == wanted
        assert sum(tokenizer.count(i) for i in unlabelled) == body["per_turn_tokens"]
        assert body["anthropic"]["system"][-1]["text"] == sent
    # The lorebook slot: one message per activation, right after the stable prefix, carrying
    # its text (after a "[From …'s world]" label line in group chats).
    stable = body["canon"]["entries"] or any(e["via"] == "whole_book" for e in injected)
    start = 1 if stable else 0
    slot = messages[start : start + len(classic)]
    assert [m["role"] for m in slot] == [e["role"] for e in classic]
    for message, entry in zip(slot, classic, strict=True):
        assert message["content"] in (
            entry["text"],
            f"{message['content'].split(chr(10))[0]}\n{entry['text']}",
        )
