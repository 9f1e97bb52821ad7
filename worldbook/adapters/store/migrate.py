"""Run the packaged Alembic migrations programmatically (no alembic.ini needed at run time)."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from worldbook.adapters.store.engine import create_engine, translate_errors

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_database(url: str, revision: str = "head", *, engine: sa.Engine | None = None) -> None:
    """Bring the database at ``url`` to ``revision`` (idempotent; safe on every start).

    Pass the store's own ``engine`` for an in-memory SQLite URL (``sqlite://``), whose database
    lives only as long as that engine's connection.
    """
    own = engine is None
    active = create_engine(url) if engine is None else engine
    try:
        with translate_errors(), active.connect() as conn:
            config = alembic_config(url)
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
            conn.commit()
    finally:
        if own:
            active.dispose()
