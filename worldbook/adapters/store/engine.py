"""Engines, transactions and the one place SQLAlchemy errors become worldbook errors.

Every store write runs in ONE transaction from :func:`write_tx`. Writes that touch a book lock its
row first (``SELECT … FOR UPDATE`` on PostgreSQL); SQLite has no row locks, so write transactions
start with ``BEGIN IMMEDIATE``, which takes the database's single writer lock up front and
serialises writers (https://www.sqlite.org/lang_transaction.html). pysqlite's own implicit
transaction handling is switched off for that, as SQLAlchemy's SQLite dialect docs recommend
("Serializable isolation / Savepoints / Transactional DDL").
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.pool import StaticPool

from worldbook.errors import Conflict, InvalidInput, StorageUnavailable, WorldbookError

_WRITE = "worldbook_write"
SQLITE_BUSY_TIMEOUT_S = 30.0


def create_engine(url: str) -> sa.Engine:
    """An engine for ``url``; SQLite gets WAL (synchronous=NORMAL), foreign keys and explicit
    transaction control."""
    try:
        parsed = sa.make_url(url)
    except sa_exc.ArgumentError as exc:
        raise InvalidInput(f"database URL {url!r} is not a SQLAlchemy URL.", field="url") from exc
    if parsed.get_backend_name() != "sqlite":
        return sa.create_engine(url, pool_pre_ping=True)
    memory = parsed.database in (None, "", ":memory:")
    kwargs: dict[str, Any] = {
        "connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_S}
    }
    if memory:
        kwargs["poolclass"] = StaticPool  # one shared connection, or each sees its own database
    engine = sa.create_engine(url, **kwargs)

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module doc)
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            # With WAL, NORMAL syncs only at checkpoints, not at every commit: the database
            # stays consistent after a crash or power loss; only the last commits may be
            # lost (https://www.sqlite.org/pragma.html#pragma_synchronous). docs/decisions.md.
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        immediate = conn.get_execution_options().get(_WRITE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def is_postgres(engine: sa.Engine) -> bool:
    return engine.dialect.name == "postgresql"


@contextmanager
def translate_errors() -> Iterator[None]:
    """Turn SQLAlchemy/DBAPI errors into worldbook errors (once, here)."""
    try:
        yield
    except WorldbookError:
        raise
    except sa_exc.IntegrityError as exc:
        raise Conflict(
            "the change clashes with existing data (a duplicate or a missing parent); "
            "reload and retry."
        ) from exc
    except sa_exc.DataError as exc:
        raise InvalidInput(f"the database rejected a value: {exc.orig}") from exc
    except (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DisconnectionError) as exc:
        cause = type(getattr(exc, "orig", None) or exc).__name__
        raise StorageUnavailable(
            f"the database is unavailable or busy ({cause}); retry later."
        ) from exc
    except sa_exc.SQLAlchemyError as exc:
        raise StorageUnavailable(f"database error: {exc}; retry later.") from exc


@contextmanager
def read_tx(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A short read transaction (consistent snapshot on PostgreSQL)."""
    with translate_errors(), engine.connect() as conn, conn.begin():
        yield conn


@contextmanager
def write_tx(engine: sa.Engine) -> Iterator[sa.Connection]:
    """One write transaction: everything inside commits together or not at all."""
    with (
        translate_errors(),
        engine.connect().execution_options(**{_WRITE: True}) as conn,
        conn.begin(),
    ):
        yield conn
