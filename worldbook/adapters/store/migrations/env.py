"""Alembic environment for worldbook's packaged migrations.

Run by :func:`worldbook.adapters.store.migrate.upgrade_database` with a live connection in
``config.attributes["connection"]``; SQLite gets batch mode (ALTER TABLE by table copy).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from worldbook.adapters.store.engine import create_engine
from worldbook.adapters.store.tables import metadata

# Several API replicas may start at once; on PostgreSQL they queue on this advisory lock.
_PG_MIGRATION_LOCK = 7_210_447_001


def _run(conn: sa.Connection) -> None:
    context.configure(
        connection=conn,
        target_metadata=metadata,
        render_as_batch=conn.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        context.run_migrations()


def run_migrations_online() -> None:
    conn = context.config.attributes.get("connection")
    if conn is not None:
        _run(conn)
        return
    engine = create_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.connect() as new_conn:
        _run(new_conn)
        new_conn.commit()
    engine.dispose()


run_migrations_online()
