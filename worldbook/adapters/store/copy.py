"""Copy every table of one worldbook database to another, and prove it (ADR 0018).

The tables come from the schema's metadata (:mod:`worldbook.adapters.store.tables`) in
foreign-key order, so a table added later is copied with no change here. Each table is read in
primary-key order in chunks and *upserted* into the target, one transaction per chunk: a copy
interrupted anywhere is finished by running it again, which rewrites what is there and adds
what is missing, never a duplicate. Then each table's row count and checksum (SHA-256 over its
rows in key order, values in one canonical form, so SQLite and PostgreSQL agree) are compared.

The SQLite backup (:func:`backup_sqlite`) uses SQLite's online backup API: a consistent copy
while the server keeps reading and writing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from worldbook.adapters.store.engine import create_engine
from worldbook.adapters.store.migrate import upgrade_database
from worldbook.adapters.store.tables import metadata
from worldbook.errors import InvalidInput

CHUNK_ROWS = 500


@dataclass(frozen=True, slots=True)
class TableCheck:
    """One table after a copy: rows and checksum on both sides."""

    table: str
    source_rows: int
    target_rows: int
    source_sum: str
    target_sum: str

    @property
    def same(self) -> bool:
        return self.source_rows == self.target_rows and self.source_sum == self.target_sum


def copied_tables() -> list[sa.Table]:
    """Every table of the schema, parents before children."""
    return list(metadata.sorted_tables)


def _canonical(value: Any) -> Any:
    """One form per value whatever the backend gave back: SQLite hands back naive UTC times,
    PostgreSQL aware ones; bytes as hex; JSON as parsed values (dumped with sorted keys)."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes | memoryview):
        return bytes(value).hex()
    return value


def _rows(conn: sa.Connection, table: sa.Table, after: tuple[Any, ...] | None) -> list[Any]:
    key = list(table.primary_key.columns)
    stmt = sa.select(table).order_by(*key).limit(CHUNK_ROWS)
    if after is not None:
        stmt = stmt.where(sa.tuple_(*key) > sa.tuple_(*after))
    return list(conn.execute(stmt).mappings())


def _chunks(engine: sa.Engine, table: sa.Table) -> Iterator[list[Any]]:
    """The table's rows in primary-key order, ``CHUNK_ROWS`` at a time (keyset paging)."""
    key = [c.name for c in table.primary_key.columns]
    after: tuple[Any, ...] | None = None
    while True:
        with engine.connect() as conn:
            rows = _rows(conn, table, after)
        if not rows:
            return
        yield rows
        after = tuple(rows[-1][k] for k in key)


def checksum(engine: sa.Engine, table: sa.Table) -> tuple[int, str]:
    """(rows, SHA-256 of the rows in key order, each one canonical JSON line)."""
    digest = hashlib.sha256()
    count = 0
    names = [c.name for c in table.columns]
    for rows in _chunks(engine, table):
        for row in rows:
            line = [_canonical(row[n]) for n in names]
            digest.update(json.dumps(line, sort_keys=True, default=str).encode())
            digest.update(b"\n")
            count += 1
    return count, digest.hexdigest()


def _upsert(conn: sa.Connection, table: sa.Table, rows: Sequence[Any]) -> None:
    """Insert these rows, overwriting any already there under the same key."""
    dialect = conn.dialect.name
    stmt: postgresql.Insert | sqlite.Insert
    if dialect == "postgresql":
        stmt = postgresql.insert(table)
    elif dialect == "sqlite":
        stmt = sqlite.insert(table)
    else:
        raise InvalidInput(f"db copy supports SQLite and PostgreSQL, not {dialect}.", field="to")
    key = [c.name for c in table.primary_key.columns]
    rest = {c.name: stmt.excluded[c.name] for c in table.columns if c.name not in key}
    done = (
        stmt.on_conflict_do_update(index_elements=key, set_=rest)
        if rest
        else stmt.on_conflict_do_nothing(index_elements=key)
    )
    conn.execute(done, [dict(r) for r in rows])


def _bump_sequences(conn: sa.Connection, table: sa.Table) -> None:
    """PostgreSQL: serial keys copied explicitly leave their sequence behind; move it on."""
    if conn.dialect.name != "postgresql":
        return
    for column in table.primary_key.columns:
        if column.autoincrement is True and isinstance(column.type, sa.Integer):
            conn.execute(
                sa.text(
                    f"SELECT setval(pg_get_serial_sequence('{table.name}', '{column.name}'), "
                    f'COALESCE((SELECT MAX("{column.name}") FROM "{table.name}"), 0) + 1, false)'
                )
            )


Progress = Callable[[str, int], None]


def copy_database(
    source_url: str, target_url: str, *, on_chunk: Progress | None = None
) -> list[TableCheck]:
    """Copy every table from ``source_url`` to ``target_url`` (migrated to the newest schema
    first) and compare them; resumable (see the module doc)."""
    if sa.make_url(source_url) == sa.make_url(target_url):
        raise InvalidInput("the source and the target are the same database.", field="to")
    upgrade_database(source_url)
    upgrade_database(target_url)
    source, target = create_engine(source_url), create_engine(target_url)
    try:
        for table in copied_tables():
            for rows in _chunks(source, table):
                with target.begin() as conn:
                    _upsert(conn, table, rows)
                if on_chunk is not None:
                    on_chunk(table.name, len(rows))
            with target.begin() as conn:
                _bump_sequences(conn, table)
        return verify(source, target)
    finally:
        source.dispose()
        target.dispose()


def verify(source: sa.Engine, target: sa.Engine) -> list[TableCheck]:
    """Rows and checksum of every table on both sides."""
    checks = []
    for table in copied_tables():
        rows, summed = checksum(source, table)
        target_rows, target_sum = checksum(target, table)
        checks.append(TableCheck(table.name, rows, target_rows, summed, target_sum))
    return checks


def sqlite_path(url: str) -> Path:
    """The file of a SQLite URL.

    Raises:
        InvalidInput: not a SQLite file URL (PostgreSQL is backed up with pg_dump).
    """
    parsed = sa.make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        raise InvalidInput(
            "db backup copies the embedded SQLite file; back up PostgreSQL with pg_dump "
            "(README, 'Operating worldbook').",
            field="database_url",
        )
    return Path(str(parsed.database))


def backup_sqlite(url: str, out: Path, *, pages_per_step: int = 1024) -> int:
    """A consistent copy of the SQLite database at ``url`` in ``out`` (SQLite's online backup
    API: the server keeps working; writes made meanwhile restart the copy of what changed).
    Returns the copy's size in bytes."""
    path = sqlite_path(url)
    if not path.exists():
        raise InvalidInput(f"no database file at {path}.", field="database_url")
    if out.exists():
        raise InvalidInput(f"{out} exists; name a new file.", field="out")
    out.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as src, sqlite3.connect(out) as dst:
        src.execute("PRAGMA busy_timeout = 30000")
        src.backup(dst, pages=pages_per_step)
    src.close()
    dst.close()
    return out.stat().st_size
