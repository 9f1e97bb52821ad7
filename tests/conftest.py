"""Shared fixtures: a clean WORLDBOOK_* environment and a store on SQLite and PostgreSQL.

The ``store`` fixture runs every store test twice: on a fresh SQLite file and on a fresh
PostgreSQL database (``WORLDBOOK_TEST_POSTGRES_URL``, default the local ``test`` database).
Each PostgreSQL test gets its own database cloned from a migrated template, dropped afterwards.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from worldbook.adapters.store import SqlStore, open_store, upgrade_database
from worldbook.testing import InMemoryStore

DEFAULT_POSTGRES_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
POSTGRES_URL = os.environ.get("WORLDBOOK_TEST_POSTGRES_URL") or DEFAULT_POSTGRES_URL


INTEGRATION = Path(__file__).parent / "integration"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/integration is out of the fast tier (see pyproject's addopts)."""
    for item in items:
        if item.path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _clean_worldbook_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No WORLDBOOK_* setting leaks from the shell into a test (the test service URLs stay)."""
    for name in list(os.environ):
        if name.startswith("WORLDBOOK_") and not name.startswith("WORLDBOOK_TEST_"):
            monkeypatch.delenv(name, raising=False)
    # `worldbook serve`/`worker` run in-process name their metrics directory in the
    # environment; it must not outlive the test (monkeypatch restores the value it saw).
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", os.environ.get("PROMETHEUS_MULTIPROC_DIR", ""))
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")


class _Postgres:
    """Creates throw-away databases next to the one named by the test URL."""

    def __init__(self, url: str) -> None:
        self.base = sa.make_url(url)
        self.admin = sa.create_engine(url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
        self.template: str | None = None

    def url_for(self, name: str) -> str:
        return self.base.set(database=name).render_as_string(hide_password=False)

    def reachable(self) -> str | None:
        try:
            with self.admin.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        except Exception as exc:  # any failure means: skip the PostgreSQL params
            return f"{type(exc).__name__}: {exc}".splitlines()[0]
        return None

    def create(self, *, migrated: bool) -> str:
        name = f"wb_test_{uuid.uuid4().hex[:16]}"
        with self.admin.connect() as conn:
            if migrated:
                if self.template is None:
                    self.template = f"wb_tmpl_{uuid.uuid4().hex[:16]}"
                    conn.execute(sa.text(f'CREATE DATABASE "{self.template}"'))
                    upgrade_database(self.url_for(self.template))
                conn.execute(sa.text(f'CREATE DATABASE "{name}" TEMPLATE "{self.template}"'))
            else:
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        return name

    def drop(self, name: str) -> None:
        with self.admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def _postgres() -> Iterator[_Postgres]:
    pg = _Postgres(POSTGRES_URL)
    yield pg
    if pg.template is not None:
        pg.drop(pg.template)
    pg.admin.dispose()


def _postgres_database(pg: _Postgres, *, migrated: bool) -> Iterator[str]:
    problem = pg.reachable()
    if problem is not None:
        pytest.skip(f"PostgreSQL at {POSTGRES_URL} is unreachable ({problem}); run scripts/test")
    name = pg.create(migrated=migrated)
    try:
        yield pg.url_for(name)
    finally:
        pg.drop(name)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_database_url(
    request: pytest.FixtureRequest, tmp_path: Path, _postgres: _Postgres
) -> Iterator[str]:
    """The URL of a new, empty (unmigrated) database on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'worldbook.db'}"
    else:
        yield from _postgres_database(_postgres, migrated=False)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres), "memory"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, _postgres: _Postgres
) -> Iterator[SqlStore]:
    """A migrated, empty :class:`SqlStore` on SQLite and on PostgreSQL, and the in-memory
    store of ``worldbook.testing`` (the same contract; tests that need SQL skip it)."""
    if request.param == "memory":
        if request.node.get_closest_marker("sql_only"):
            pytest.skip("exercises SQL behaviour the in-memory store has no equivalent of")
        yield InMemoryStore()  # type: ignore[misc]
        return
    if request.param == "sqlite":
        opened = open_store(f"sqlite:///{tmp_path / 'worldbook.db'}")
        yield opened
        opened.close()
        return
    for url in _postgres_database(_postgres, migrated=True):
        opened = SqlStore(url)
        try:
            yield opened
        finally:
            opened.close()


# --- the log watch (ADR 0018): planted secrets and lore must never reach a log line ----------
PLANTED_SECRET = "sk-planted-upstream-9f3c2e71"
PLANTED_LORE = "The lighthouse of Verrow Quay burns whale-oil dyed violet at the solstice."


class _LogWatch(logging.Handler):
    """Sees every record any logger emits during the session (worldbook's own at DEBUG)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.planted: set[str] = {PLANTED_SECRET, PLANTED_LORE}
        self.leaks: list[str] = []

    def plant(self, text: str) -> None:
        self.planted.add(text)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a bad format string is not a leak; the record's args still are
            text = f"{record.msg} {record.args}"
        if record.exc_info and record.exc_info[1] is not None:
            text += f" {record.exc_info[1]!r}"
        text += " " + " ".join(str(v) for v in vars(record).values())
        for planted in self.planted:
            if planted in text:
                self.leaks.append(f"{record.name} {record.levelname}: {planted[:24]}…")


@pytest.fixture(scope="session")
def log_watch() -> Iterator[_LogWatch]:
    watch = _LogWatch()
    root, ours = logging.getLogger(), [logging.getLogger(n) for n in ("worldbook", "workers")]
    levels = [logger.level for logger in ours]
    root.addHandler(watch)
    for logger in ours:
        logger.setLevel(logging.DEBUG)  # "at any level": worldbook's debug lines are watched too
    yield watch
    root.removeHandler(watch)
    for logger, level in zip(ours, levels, strict=True):
        logger.setLevel(level)


@pytest.fixture(autouse=True)
def _no_planted_text_logged(log_watch: _LogWatch) -> Iterator[None]:
    """Fails the test during which a planted secret or lore sentence reached any log record."""
    log_watch.leaks.clear()
    yield
    assert not log_watch.leaks, f"planted text was logged: {log_watch.leaks}"
