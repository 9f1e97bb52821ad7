"""Snapshot every answer a refactoring must keep byte-identical: HTTP bodies of select, preview
and lookup, and the CLI's select / preview output, over the sample books and the hard sets.

    .venv/bin/python scripts/turn_snapshots.py OUT.json      # then diff two snapshots

Runs on a fresh SQLite file with the hashing embedder (deterministic, no model), everything
indexed first, so the literal, semantic, whole-book, classic and hybrid paths all answer.
Timing headers are left out; ids come from a seeded generator (they break ranking ties).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO.parent / "shared" / "samples" / "lorebooks"
HARD_SETS = REPO / "benchmarks" / "hard_set"


def main(out: Path) -> None:
    import os

    tmp = Path(tempfile.mkdtemp())
    os.environ["WORLDBOOK_DATA_DIR"] = str(tmp / "data")
    os.environ["WORLDBOOK_EMBEDDER"] = "fake"
    # Ids break ranking ties, so they are drawn from a seeded generator here.
    import base64
    import random

    import worldbook.core.store_rules as store_rules

    draws = random.Random(0)
    store_rules.secrets.token_urlsafe = lambda n=16: (  # type: ignore[assignment,misc]
        base64.urlsafe_b64encode(draws.randbytes(n or 16)).rstrip(b"=").decode()
    )
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from worldbook.api.app import create_app
    from worldbook.cli.main import app as cli_app
    from worldbook.service.components import Components
    from worldbook.service.indexing import index_now
    from worldbook.settings import WorldbookSettings
    from worldbook.testing import HashingEmbedder

    settings = WorldbookSettings()
    parts = Components(settings, embedder=HashingEmbedder(), start_queue=False)
    services = parts.services
    _, key = services.store.create_api_key("snapshots")
    headers = {"Authorization": f"Bearer {key}", "X-Worldbook-User": settings.cli_user}
    snapshot: dict[str, Any] = {}
    cli = CliRunner()
    with TestClient(create_app(components=parts)) as client:
        books: list[tuple[str, str, list[list[dict[str, Any]]]]] = []
        for path in sorted(SAMPLES.glob("*")):
            if path.suffix in (".md",):
                continue
            for mode in ("world", "classic", "hybrid"):
                made = client.post(
                    f"/v1/books/import?mode={mode}",
                    files={"file": (path.name, path.read_bytes())},
                    headers=headers,
                )
                if made.status_code != 201:  # e.g. a card with no book in it
                    snapshot[f"http import {path.name}:{mode}"] = [made.status_code, made.json()]
                    continue
                book = made.json()["book_id"]
                titles = [
                    e["title"]
                    for e in client.get(f"/v1/books/{book}/entries", headers=headers).json()[
                        "entries"
                    ]
                ]
                chats = [[{"role": "user", "content": f"Tell me about {t}."}] for t in titles[:3]]
                chats.append([{"role": "user", "content": "What is this world like?"}])
                books.append((f"{path.name}:{mode}", book, chats))
        for folder in sorted(p for p in HARD_SETS.iterdir() if (p / "world.json").is_file()):
            data = (folder / "world.json").read_bytes()
            made = client.post(
                "/v1/books/import", files={"file": ("world.json", data)}, headers=headers
            )
            made.raise_for_status()
            turns = json.loads((folder / "turns.json").read_text(encoding="utf-8"))["turns"]
            books.append((folder.name, made.json()["book_id"], [t["messages"] for t in turns]))
        index_now(services)
        for name, book, chats in books:
            for i, messages in enumerate(chats):
                body = {"book_ids": [book], "messages": messages, "user_name": "Ari"}
                for window, tools in ((8192, True), (2048, False), (128000, False)):
                    turn = {**body, "input_window": window, "supports_tools": tools}
                    got = client.post(
                        "/v1/select", json={**turn, "chat_id": f"c{i}"}, headers=headers
                    )
                    snapshot[f"http select {name} #{i} w{window}"] = [got.status_code, got.json()]
                last = messages[-1]["content"][:2000]
                got = client.post(
                    "/v1/preview", json={"book_ids": [book], "message": last}, headers=headers
                )
                snapshot[f"http preview {name} #{i}"] = [got.status_code, got.json()]
                injected = snapshot[f"http select {name} #{i} w8192"][1].get("index") or []
                for line in injected[:2]:
                    got = client.post(
                        "/v1/lookup",
                        json={"book_ids": [book], "title": line["title"], "user_name": "Ari"},
                        headers=headers,
                    )
                    snapshot[f"http lookup {name} #{i} {line['title']}"] = [
                        got.status_code,
                        got.json(),
                    ]
            messages_file = tmp / "m.json"
            messages_file.write_text(json.dumps(chats[0]), encoding="utf-8")
            for args in (
                ["select", "--book", book, "--messages", str(messages_file), "--json"],
                [
                    "select",
                    "--book",
                    book,
                    "--messages",
                    str(messages_file),
                    "--explain",
                    "--chat",
                    "x",
                ],
                ["preview", "--book", book, "--message", chats[0][-1]["content"][:2000]],
            ):
                result = cli.invoke(cli_app, args)
                snapshot[f"cli {name} {args[0]} {' '.join(args[4:]).replace(str(tmp), '')}"] = [
                    result.exit_code,
                    result.stdout,
                ]
    parts.close()
    text = json.dumps(snapshot, ensure_ascii=False, indent=1, sort_keys=True)
    ids: dict[str, str] = {}
    text = re.sub(
        r"[A-Za-z0-9_-]{22}(?![A-Za-z0-9_-])",
        lambda m: ids.setdefault(m.group(0), f"ID{len(ids)}"),
        text,
    )
    out.write_text(text, encoding="utf-8")
    print(f"{len(snapshot)} answers -> {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
