"""Run the packaged Alembic migrations programmatically (no alembic.ini needed at run time)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from worldbook.adapters.store.engine import create_engine, translate_errors

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade_database(url: str, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision`` (idempotent; safe on every start)."""
    engine = create_engine(url)
    try:
        with translate_errors(), engine.connect() as conn:
            config = alembic_config(url)
            config.attributes["connection"] = conn
            command.upgrade(config, revision)
            conn.commit()
    finally:
        engine.dispose()
