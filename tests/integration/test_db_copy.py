"""``worldbook db copy`` and ``db backup`` (ADR 0018): every table, both ways, resumable.

The source is filled generically from the schema's metadata, a few rows in every table (foreign
keys pointing at the parent rows), so a table added later is filled and checked with no change
here; then real store writes on top.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

import worldbook.adapters.store.copy as copy_module
from worldbook.adapters.store import open_store, upgrade_database
from worldbook.adapters.store.copy import (
    backup_sqlite,
    checksum,
    copied_tables,
    copy_database,
)
from worldbook.adapters.store.tables import metadata
from worldbook.cli.main import app as cli_app
from worldbook.core.drafts import BookDraft, EntryDraft

ROWS = 7


def _value(column: sa.Column[Any], i: int, parents: dict[str, list[dict[str, Any]]]) -> Any:
    for fk in column.foreign_keys:
        rows = parents[fk.column.table.name]
        return rows[i % len(rows)][fk.column.name]
    kind = column.type
    if isinstance(kind, sa.Boolean):
        return i % 2 == 0
    if isinstance(kind, sa.Integer):
        return i + 1
    if isinstance(kind, sa.DateTime):
        return datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC) + timedelta(minutes=i)
    if isinstance(kind, sa.Date):
        return date(2026, 1, 1) + timedelta(days=i)
    if isinstance(kind, sa.JSON):
        return {"i": i, "list": ["ä", i], "nested": {"b": True}}
    if isinstance(kind, sa.LargeBinary):
        return bytes([i, 0, 255, 7]) * 8
    length = getattr(kind, "length", None) or 40
    return f"{column.name[:6]}-{i}-é"[:length]


def fill_every_table(url: str) -> dict[str, int]:
    """ROWS rows in every table of the schema; returns rows per table."""
    upgrade_database(url)
    engine = sa.create_engine(url)
    made: dict[str, list[dict[str, Any]]] = {}
    with engine.begin() as conn:
        for table in copied_tables():
            rows = [{c.name: _value(c, i, made) for c in table.columns} for i in range(ROWS)]
            conn.execute(table.insert(), rows)
            made[table.name] = rows
    engine.dispose()
    return {name: len(rows) for name, rows in made.items()}


def sums(url: str) -> dict[str, tuple[int, str]]:
    engine = sa.create_engine(url)
    try:
        return {t.name: checksum(engine, t) for t in copied_tables()}
    finally:
        engine.dispose()


@pytest.fixture
def pg_url(_postgres: Any) -> Iterator[str]:
    from tests.conftest import _postgres_database

    yield from _postgres_database(_postgres, migrated=False)


@pytest.fixture
def source(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    fill_every_table(url)
    store = open_store(url)  # and real writes on top: a book with entries
    try:
        book = store.create_book("owner-1", BookDraft(title="Copied"))
        store.add_entries(book.id, [EntryDraft(title="Harbour", lore="x" * 40)])
    finally:
        store.close()
    return url


def test_every_metadata_table_is_copied() -> None:
    assert {t.name for t in copied_tables()} == set(metadata.tables)


@pytest.mark.postgres
def test_sqlite_to_postgres_to_sqlite_is_identical(
    source: str, pg_url: str, tmp_path: Path
) -> None:
    checks = copy_database(source, pg_url)
    assert {c.table for c in checks} == set(metadata.tables)
    assert all(c.same and c.source_rows >= ROWS for c in checks), checks
    back = f"sqlite:///{tmp_path / 'back.db'}"
    assert all(c.same for c in copy_database(pg_url, back))
    assert sums(back) == sums(source)
    # Serial keys copied explicitly: PostgreSQL's next generated id does not collide.
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        log = metadata.tables["chat_log"]
        row = {c.name: _value(c, 99, {}) for c in log.columns if not c.foreign_keys}
        row.pop("id")
        conn.execute(log.insert(), [row])
    engine.dispose()


@pytest.mark.postgres
def test_an_interrupted_copy_resumed_gives_the_same_result(
    source: str, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(copy_module, "CHUNK_ROWS", 3)
    real = copy_module._upsert
    calls = [0]

    def dies_midway(conn: sa.Connection, table: sa.Table, rows: Any) -> None:
        calls[0] += 1
        if calls[0] == 12:
            raise KeyboardInterrupt  # the operator's ^C, in the middle of a table
        real(conn, table, rows)

    monkeypatch.setattr(copy_module, "_upsert", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        copy_database(source, pg_url)
    partial = sums(pg_url)
    assert partial != sums(source)
    monkeypatch.setattr(copy_module, "_upsert", real)
    checks = copy_database(source, pg_url)
    assert all(c.same for c in checks), checks
    assert sums(pg_url) == sums(source)
    again = copy_database(source, pg_url)  # a third run changes nothing, duplicates nothing
    assert [c.target_rows for c in again] == [c.target_rows for c in checks]


def test_cli_copy_between_sqlite_files_and_refusals(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORLDBOOK_DATABASE_URL", source)
    target = f"sqlite:///{tmp_path / 'target.db'}"
    done = CliRunner().invoke(cli_app, ["db", "copy", "--to", target, "--json"])
    assert done.exit_code == 0, done.output
    assert '"same": true' in done.output and sums(target) == sums(source)
    same = CliRunner().invoke(cli_app, ["db", "copy", "--to", source])
    assert same.exit_code != 0 and "same database" in same.output


def test_backup_while_writes_go_on(source: str, tmp_path: Path) -> None:
    store = open_store(source)
    book = store.create_book("owner-2", BookDraft(title="Busy"))
    stop = threading.Event()

    def write() -> None:
        n = 0
        while not stop.is_set():
            store.add_entries(book.id, [EntryDraft(title=f"E{n}", lore="y" * 40)])
            n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        out = tmp_path / "backups" / "wb.db"
        assert backup_sqlite(source, out, pages_per_step=1) > 0
    finally:
        stop.set()
        writer.join()
        store.close()
    with sqlite3.connect(out) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("SELECT count(*) FROM books").fetchone()[0] >= ROWS + 2
    copy.close()
    again = CliRunner().invoke(
        cli_app, ["db", "backup", "--out", str(out)], env={"WORLDBOOK_DATABASE_URL": source}
    )
    assert again.exit_code != 0 and "exists" in again.output
    pg = CliRunner().invoke(
        cli_app,
        ["db", "backup", "--out", str(tmp_path / "x.db")],
        env={"WORLDBOOK_DATABASE_URL": "postgresql+psycopg://u@127.0.0.1:1/x"},
    )
    assert pg.exit_code != 0 and "pg_dump" in pg.output
