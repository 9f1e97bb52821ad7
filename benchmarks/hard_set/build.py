"""Build a hard-set world (SillyTavern World Info JSON) and its turns (JSON) from the text sources.

    python benchmarks/hard_set/build.py [saltreach unseen meridian]

Sources, per set folder (``benchmarks/hard_set/<set>/``):

* ``src/*.txt`` — entries, in file then list order::

      === Title
      aliases: one | two
      lang: fr
      canon            (optional line: the entry is canon)

      Lore paragraphs...

* ``turns.txt`` — turns::

      ### turn-id | kind | lang
      gold: Title; Title
      avoid: Title; Title      (optional)
      user (Name): message
      assistant (Name): message

Writes ``world.json`` (importable by ``worldbook import``: ``comment`` is the title, ``key`` the
aliases, ``constant`` canon) and ``turns.json`` (with each entry's language in ``entry_lang``), and
checks that every gold/avoid title is an entry and every entry has 60-400 words (a CJK character
counts as half a word).

It also checks the labels, since a described referent that is secretly named measures nothing
("names" = the title or an alias occurs verbatim in the text, casefolded):

* every set: the newest message of a ``described``, ``cross_lingual`` or ``follow_up`` turn names
  no gold entry; a ``cross_lingual`` gold is written in another language than the chat; a
  ``confuser`` turn has something to avoid.
* ``STRICT_SETS`` (sets written after these rules): no message of a ``described``,
  ``cross_lingual``, ``drift`` or ``nickname`` turn names a gold entry; a ``follow_up`` names no
  gold in any message, and when its earlier messages name an entry, the gold is a second hop
  (its lore names one of them, matching whole words); in a ``reply_named`` turn an assistant
  message names every gold and no user message does; no alias is shorter than 2 characters (4 in
  alphabetic scripts), so that it cannot hide inside ordinary words.
"""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KINDS = (
    "reply_named",
    "drift",
    "nickname",
    "two_entries",
    "confuser",
    "described",
    "follow_up",
    "cross_lingual",
    "inflected",
)
DESCRIBED_KINDS = ("described", "cross_lingual", "follow_up")
"""Kinds whose gold is described, never named, in the newest message."""
STRICT_SETS = ("meridian",)
"""Sets held to the strict labelling rules (see the module docstring)."""
_UNNAMED_KINDS = ("described", "cross_lingual", "drift", "nickname", "follow_up")
_MESSAGE = re.compile(r"^(user|assistant)\s*\(([^)]*)\)\s*:\s*(.+)$")


def words(text: str) -> float:
    wide = sum(1 for c in text if unicodedata.east_asian_width(c) in ("W", "F"))
    narrow = re.sub(r"[^\x00-\u2fff]", " ", text)
    return len(narrow.split()) + wide / 2


def read_entries(folder: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for path in sorted((folder / "src").glob("*.txt")):
        for block in path.read_text(encoding="utf-8").split("=== ")[1:]:
            head, _, lore = block.partition("\n\n")
            lines = head.strip().splitlines()
            entry: dict[str, Any] = {"title": lines[0].strip(), "aliases": [], "lang": "en"}
            entry["canon"] = False
            for line in lines[1:]:
                key, _, value = line.partition(":")
                if key.strip() == "aliases":
                    entry["aliases"] = [a.strip() for a in value.split("|") if a.strip()]
                elif key.strip() == "lang":
                    entry["lang"] = value.strip()
                elif line.strip() == "canon":
                    entry["canon"] = True
            entry["lore"] = lore.strip()
            entries.append(entry)
    return entries


def world_json(name: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for uid, e in enumerate(entries):
        out[str(uid)] = {
            "uid": uid,
            "key": [e["title"], *e["aliases"]],
            "keysecondary": [],
            "comment": e["title"],
            "content": e["lore"],
            "constant": e["canon"],
            "selective": False,
            "order": 100,
            "position": 0,
            "disable": False,
            "displayIndex": uid,
            "addMemo": True,
            "excludeRecursion": False,
            "probability": 100,
            "useProbability": True,
        }
    return {"name": name, "entries": out}


def read_turns(path: Path) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for block in path.read_text(encoding="utf-8").split("### ")[1:]:
        lines = [ln for ln in block.strip().splitlines() if ln.strip()]
        turn_id, kind, lang = (p.strip() for p in lines[0].split("|"))
        turn: dict[str, Any] = {"id": turn_id, "kind": kind, "lang": lang}
        turn.update(gold=[], avoid=[], messages=[])
        for line in lines[1:]:
            found = _MESSAGE.match(line.strip())
            if found:
                role, speaker, content = found.groups()
                turn["messages"].append({"role": role, "name": speaker, "content": content})
                continue
            key, _, value = line.partition(":")
            if key.strip() in ("gold", "avoid"):
                turn[key.strip()] = [t.strip() for t in value.split(";") if t.strip()]
            else:
                raise SystemExit(f"turn {turn_id}: cannot read line {line!r}")
        turns.append(turn)
    return turns


def check(name: str, entries: list[dict[str, Any]], turns: list[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    titles = [e["title"] for e in entries]
    if len(set(titles)) != len(titles):
        problems.append(f"{name}: duplicate titles")
    for e in entries:
        n = words(e["lore"])
        if not 60 <= n <= 400:
            problems.append(f"{name}: {e['title']!r} has {n:.0f} words")
    known = set(titles)
    ids: set[str] = set()
    for t in turns:
        if t["id"] in ids:
            problems.append(f"{name}: duplicate turn id {t['id']}")
        ids.add(t["id"])
        if t["kind"] not in KINDS:
            problems.append(f"{name}: turn {t['id']}: unknown kind {t['kind']}")
        if not 3 <= len(t["messages"]) <= 5:
            problems.append(f"{name}: turn {t['id']}: {len(t['messages'])} messages")
        if not t["gold"]:
            problems.append(f"{name}: turn {t['id']}: no gold")
        for title in (*t["gold"], *t["avoid"]):
            if title not in known:
                problems.append(f"{name}: turn {t['id']}: {title!r} is not an entry")
        if set(t["gold"]) & set(t["avoid"]):
            problems.append(f"{name}: turn {t['id']}: gold and avoid overlap")
    return problems


_LETTER = "A-Za-z0-9\u00c0-\u024f\u0370-\u04ff"


def names(text: str, entry: dict[str, Any], whole_words: bool = False) -> list[str]:
    """The entry's title and aliases that occur verbatim (casefolded) in ``text``; with
    ``whole_words``, not inside a longer Latin, Greek or Cyrillic word (CJK and Hangul names
    match inside text, where particles attach to them)."""
    folded = text.casefold()
    found = []
    for n in (entry["title"], *entry["aliases"]):
        pattern = re.escape(n.casefold())
        if whole_words:
            pattern = f"(?<![{_LETTER}]){pattern}(?![{_LETTER}])"
        if re.search(pattern, folded):
            found.append(n)
    return found


def check_labels(
    name: str, entries: list[dict[str, Any]], turns: list[dict[str, Any]], strict: bool
) -> list[str]:
    """A described referent is not named, a cross-lingual one is in another language, a
    follow-up's gold is the referent or one hop from it (see the module docstring)."""
    by_title = {e["title"]: e for e in entries}
    problems: list[str] = []
    for t in turns:
        where = f"{name}: turn {t['id']}"
        golds = [by_title[g] for g in t["gold"] if g in by_title]
        texts = [m["content"] for m in t["messages"]]
        if t["kind"] == "confuser" and not t["avoid"]:
            problems.append(f"{where}: a confuser turn with nothing to avoid")
        for g in golds:
            if t["kind"] in DESCRIBED_KINDS and names(texts[-1], g):
                problems.append(f"{where}: the newest message names {names(texts[-1], g)}")
            if t["kind"] == "cross_lingual" and g["lang"] == t["lang"]:
                problems.append(f"{where}: cross-lingual gold {g['title']!r} is in {t['lang']}")
        if strict:
            problems += _strict_labels(where, t, golds, entries)
    if strict:
        problems += [
            f"{name}: {e['title']!r}: alias {a!r} is too short to name anything"
            for e in entries
            for a in e["aliases"]
            if len(a) < 2 or (len(a) < 4 and re.fullmatch(f"[{_LETTER}]+", a.casefold()))
        ]
    return problems


def _strict_labels(
    where: str, turn: dict[str, Any], golds: list[dict[str, Any]], entries: list[dict[str, Any]]
) -> list[str]:
    problems: list[str] = []
    messages = turn["messages"]
    if turn["kind"] in _UNNAMED_KINDS:
        for g in golds:
            for m in messages:
                if names(m["content"], g):
                    problems.append(f"{where}: a message names gold {names(m['content'], g)}")
    if turn["kind"] == "follow_up":
        earlier = " ".join(m["content"] for m in messages[:-1])
        named = [e for e in entries if e not in golds and names(earlier, e, whole_words=True)]
        for g in golds:
            if named and not any(names(g["lore"], e, whole_words=True) for e in named):
                problems.append(
                    f"{where}: earlier messages name {[e['title'] for e in named]} but the lore "
                    f"of gold {g['title']!r} names none of them (not a second hop)"
                )
    if turn["kind"] == "reply_named":
        for g in golds:
            said = [m["role"] for m in messages if names(m["content"], g)]
            if "assistant" not in said or "user" in said:
                problems.append(f"{where}: {g['title']!r} must be named by the reply only")
    return problems


def build(name: str) -> list[str]:
    folder = HERE / name
    entries = read_entries(folder)
    turns = read_turns(folder / "turns.txt") if (folder / "turns.txt").is_file() else []
    world = world_json(name, entries)
    (folder / "world.json").write_text(
        json.dumps(world, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    doc = {
        "about": f"Hard evaluation turns for the '{name}' world (world.json). Written for "
        "worldbook; see benchmarks/hard_set/README.md.",
        "book": "world.json",
        "input_window": 8192,
        "entry_lang": {e["title"]: e["lang"] for e in entries},
        "canon": [e["title"] for e in entries if e["canon"]],
        "turns": turns,
    }
    (folder / "turns.json").write_text(
        json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    langs: dict[str, int] = {}
    for e in entries:
        langs[e["lang"]] = langs.get(e["lang"], 0) + 1
    other = sum(v for k, v in langs.items() if k != "en")
    print(
        f"{name}: {len(entries)} entries ({other / len(entries):.0%} not English: {langs}), "
        f"{len(turns)} turns"
    )
    return [
        *check(name, entries, turns),
        *check_labels(name, entries, turns, strict=name in STRICT_SETS),
    ]


def main() -> None:
    names = sys.argv[1:] or ["saltreach", "unseen", "meridian"]
    problems = [p for name in names for p in build(name)]
    for p in problems:
        print("  problem:", p)
    if problems:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
