"""End-to-end tests of the `worldbook` command on the sample lorebooks (DESIGN §5).

Each test works on a fresh SQLite file (WORLDBOOK_DATA_DIR=tmp) with the fake embedder, with no
server running — exactly how a batch job uses the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.conftest import run
from tests.samples import SAMPLES_ROOT
from tests.sent_lore import CHRONICLE_MESSAGE, check_sent_equals_charged, chronicle_entries
from worldbook.cli.errors import EXIT_CODES, exit_code
from worldbook.errors import LimitExceeded, WorldbookError, all_error_types

SAMPLES = SAMPLES_ROOT / "lorebooks"
needs_samples = pytest.mark.skipif(
    not SAMPLES.is_dir(), reason=f"sample lorebooks not found at {SAMPLES}"
)

# SOURCES.md entry counts per sample file.
SAMPLE_COUNTS = {
    "Eldoria.json": 4,
    "default_Seraphina.png": 4,
    "contest_Assistant_Sakana.png": 14,
    "注入测试世界书.json": 13,
    "white_samurai.scenario": 19,
}


def write_messages(path: Path, messages: list[dict[str, str]]) -> str:
    path.write_text(json.dumps(messages), encoding="utf-8")
    return str(path)


@needs_samples
@pytest.mark.parametrize("name", sorted(SAMPLE_COUNTS))
def test_import_every_sample_book(cli: CliRunner, name: str) -> None:
    body = run(cli, "import", str(SAMPLES / name), "--json")
    assert set(body) >= {"book_id", "title", "entries", "warnings"}
    assert body["entries"] == SAMPLE_COUNTS[name]
    assert all(isinstance(w, str) for w in body["warnings"])


@needs_samples
def test_card_without_a_book_is_a_clear_error(cli: CliRunner) -> None:
    result = run(cli, "import", str(SAMPLES / "contest_Assistant_Amy.png"), code=2)
    assert "no lorebook" in result.stderr.lower()


@needs_samples
def test_select_uses_whole_book_when_it_fits_and_json_has_the_contract(
    cli: CliRunner, tmp_path: Path
) -> None:
    book = run(cli, "import", str(SAMPLES / "Eldoria.json"), "--json")["book_id"]
    messages = write_messages(tmp_path / "m.json", [{"role": "user", "content": "Hello there"}])
    body = run(cli, "select", "--book", book, "--messages", messages, "--window", "32000", "--json")
    for key in ("canon", "whole_books", "per_turn_budget", "injected", "index", "messages"):
        assert key in body
    assert set(body["canon"]) >= {"budget", "tokens", "entries", "over_budget"}
    assert body["canon"]["budget"] == 3200
    assert body["whole_books"] == [book]
    assert [e["via"] for e in body["injected"]] == ["whole_book"] * 4
    for item in body["injected"]:
        assert set(item) >= {"entry_id", "book_id", "title", "tokens", "via", "truncated"}
    assert body["tools"] == []


@needs_samples
def test_select_large_book_names_an_entry_and_traces_the_rest(
    cli: CliRunner, tmp_path: Path
) -> None:
    book = run(cli, "import", str(SAMPLES / "white_samurai.scenario"), "--json")["book_id"]
    run(cli, "index", "--book", book, "--json")
    listing = run(cli, "export", book, "--format", "sillytavern")
    entries = json.loads(listing.stdout)["entries"]
    title = next(iter(entries.values()))["comment"]
    messages = write_messages(
        tmp_path / "m.json",
        [
            {"role": "assistant", "name": "Narrator", "content": "The road is quiet."},
            {"role": "user", "content": f"What do I know about {title}?"},
        ],
    )
    body = run(
        cli,
        "select",
        "--book",
        book,
        "--messages",
        messages,
        "--window",
        "4000",
        "--tools",
        "--json",
    )
    assert body["whole_books"] == []
    # DESIGN §2: per-turn lore = min(2,000, what canon left of its budget).
    canon = body["canon"]
    assert canon["budget"] == 400
    assert body["per_turn_budget"] == min(2000, canon["budget"] - canon["tokens"])
    literal = [e for e in body["injected"] if e["via"] == "literal"]
    assert title in [e["title"] for e in literal]
    spent = sum(e.get("cost", e["tokens"]) for e in body["injected"] + body["index"])
    assert spent <= body["per_turn_budget"]
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup_lore"]
    assert all(set(t) >= {"entry_id", "title", "decision", "reason"} for t in body["trace"])


@needs_samples
def test_disabled_entries_never_reach_the_model(cli: CliRunner, tmp_path: Path) -> None:
    book = run(cli, "import", str(SAMPLES / "注入测试世界书.json"), "--json")["book_id"]
    exported = json.loads(run(cli, "export", book, "--format", "sillytavern").stdout)
    disabled = [e["comment"] for e in exported["entries"].values() if e.get("disable")]
    assert disabled, "the sample has a disabled entry"
    messages = write_messages(
        tmp_path / "m.json", [{"role": "user", "content": " ".join(disabled)}]
    )
    body = run(cli, "select", "--book", book, "--messages", messages, "--window", "32000", "--json")
    reached = {e["title"] for e in body["injected"] + body["index"] + body["canon"]["entries"]}
    assert not reached & set(disabled)
    assert all(d not in m["content"] for d in disabled for m in body["messages"])


@needs_samples
def test_preview_reports_and_refuses_a_long_message(cli: CliRunner) -> None:
    book = run(cli, "import", str(SAMPLES / "Eldoria.json"), "--json")["book_id"]
    body = run(cli, "preview", "--book", book, "--message", "Who lives in Eldoria?", "--json")
    assert "injected" in body and "index" in body and "over_budget" in body["canon"]
    result = run(cli, "preview", "--book", book, "--message", "x" * 2001, code=2)
    assert "2,000" in result.stderr


@needs_samples
@pytest.mark.parametrize("fmt", ["sillytavern", "ccv3"])
def test_export_then_reimport_keeps_the_book(cli: CliRunner, tmp_path: Path, fmt: str) -> None:
    book = run(cli, "import", str(SAMPLES / "contest_Assistant_Sakana.png"), "--json")["book_id"]
    out = tmp_path / f"book.{fmt}.json"
    run(cli, "export", book, "--format", fmt, "--out", str(out))
    again = run(cli, "import", str(out), "--json")
    assert again["entries"] == 14
    first = json.loads(run(cli, "export", book, "--format", fmt).stdout)
    second = json.loads(run(cli, "export", again["book_id"], "--format", fmt).stdout)
    assert first == second


def test_unknown_book_and_bad_messages_are_clean_errors(cli: CliRunner, tmp_path: Path) -> None:
    messages = write_messages(tmp_path / "m.json", [{"role": "user", "content": "hi"}])
    result = run(cli, "select", "--book", "nope", "--messages", messages, code=3)
    assert "nope" in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('[{"role": "robot", "content": "hi"}]', encoding="utf-8")
    result = run(cli, "select", "--book", "nope", "--messages", str(bad), code=2)
    assert "role" in result.stderr


def test_keys_create_list_revoke(cli: CliRunner) -> None:
    created = run(cli, "keys", "create", "my-app", "--json")
    assert created["key"] and created["name"] == "my-app"
    listed = run(cli, "keys", "list", "--json")
    assert [k["revoked"] for k in listed if k["id"] == created["id"]] == [False]
    run(cli, "keys", "revoke", created["id"])
    listed = run(cli, "keys", "list", "--json")
    assert [k["revoked"] for k in listed if k["id"] == created["id"]] == [True]


def test_every_error_type_has_a_nonzero_exit_code() -> None:
    for cls in all_error_types():
        if issubclass(cls, LimitExceeded):
            error: WorldbookError = cls(limit="x", allowed="y", actual="z")
        else:
            error = cls("x")
        assert exit_code(error) in EXIT_CODES.values()
        assert exit_code(error) != 0


def test_select_explain_prints_the_request_log_of_a_classic_turn(
    cli: CliRunner, tmp_path: Path
) -> None:
    book_file = tmp_path / "keys.json"
    book_file.write_text(
        json.dumps(
            {
                "entries": {
                    "0": {"uid": 0, "key": ["dragon"], "comment": "Dragon", "content": "Fire."},
                    "1": {"uid": 1, "key": ["orc"], "comment": "Orc", "content": "Orcs."},
                }
            }
        ),
        encoding="utf-8",
    )
    book = run(cli, "import", str(book_file), "--mode", "classic", "--json")["book_id"]
    messages = write_messages(tmp_path / "m.json", [{"role": "user", "content": "A dragon!"}])
    result = run(cli, "select", "--book", book, "--messages", messages, "--chat", "c1", "--explain")
    out = result.stdout
    assert "in full [keyword] Dragon" in out
    assert "request log:" in out and "went in:" in out
    assert "[keyword] Dragon — 2 tokens: key 'dragon' in message 0" in out
    assert "lorebook 2/2000" in out
    assert "left_out Orc: no_match: no key matched" in out  # every entry's fate follows


@needs_samples
def test_select_fills_user_and_character_names(cli: CliRunner, tmp_path: Path) -> None:
    # Macros (ADR 0012): --user-name and --character ID:NAME fill {{user}} / {{char}} in the lore.
    book = run(cli, "import", str(SAMPLES / "contest_Assistant_Sakana.png"), "--json")["book_id"]
    messages = write_messages(
        tmp_path / "m.json", [{"role": "user", "content": "魚について教えて"}]
    )
    args = ("select", "--book", book, "--messages", messages, "--json")
    named = run(cli, *args, "--user-name", "Ari", "--character", "sakana:Sakana")
    texts = json.dumps([e["text"] for e in named["injected"]], ensure_ascii=False)
    assert "{{user}}" not in texts and "Ari" in texts
    bare = run(cli, *args)
    assert any("{{user}}" in e["text"] for e in bare["injected"])
    assert any("user_name" in note for note in bare["notes"])


def test_select_and_preview_send_the_cut_they_charge(cli: CliRunner, tmp_path: Path) -> None:
    # DESIGN §2 budget table: the named chronicle is cut to what is left of the per-turn
    # budget, and the text the model receives is that cut (it once went whole).
    entries = {
        str(i): {
            "uid": i,
            "comment": e["title"],
            "key": e.get("aliases", []),
            "content": e["lore"],
            "constant": e.get("canon", False),
        }
        for i, e in enumerate(chronicle_entries())
    }
    source = tmp_path / "chronicle.json"
    source.write_text(json.dumps({"name": "Chronicles", "entries": entries}), encoding="utf-8")
    book = run(cli, "import", str(source), "--json")["book_id"]
    messages = write_messages(tmp_path / "m.json", [{"role": "user", "content": CHRONICLE_MESSAGE}])
    common = ("--book", book, "--window", "8192", "--json")
    for body in (
        run(cli, "select", "--messages", messages, "--user-name", "Ari", *common),
        run(cli, "preview", "--message", CHRONICLE_MESSAGE, *common),
    ):
        check_sent_equals_charged(body)
        [chronicle] = [e for e in body["injected"] if e["title"] == "The Long Chronicle"]
        assert chronicle["truncated"] and chronicle["cost"] <= body["per_turn_budget"]
        assert chronicle["text"] in body["messages"][-1]["content"]
