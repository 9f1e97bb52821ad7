"""The Celery app factory and the thin tasks, run in-process (no broker, no worker)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from workers.runtime import Indexer
from workers.tasks import MAX_IDS_PER_TASK, parse_entry_ids
from worldbook.adapters.queues import INDEX_QUEUE, INDEX_TASK, SWEEP_TASK
from worldbook.adapters.store import open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.errors import InvalidInput, ServiceUnavailable
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

CLOSED = "redis://127.0.0.1:9/0"


def settings(tmp_path: Path, **extra: object) -> WorldbookSettings:
    return WorldbookSettings(broker_url=CLOSED, data_dir=tmp_path / "data", **extra)  # type: ignore[arg-type]


def test_the_app_acks_late_rejects_on_worker_loss_and_prefetches_one(tmp_path: Path) -> None:
    from workers.celery_app import make_celery

    app = make_celery(settings(tmp_path, sweep_interval_s=42))
    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_default_queue == INDEX_QUEUE
    assert conf.beat_schedule["worldbook-sweep"] == {"task": SWEEP_TASK, "schedule": 42.0}
    task = app.tasks[INDEX_TASK]
    assert task.acks_late and task.reject_on_worker_lost
    assert ServiceUnavailable in task.autoretry_for and task.retry_backoff
    assert SWEEP_TASK in app.tasks


def test_no_broker_url_is_a_clear_error(tmp_path: Path) -> None:
    from workers.celery_app import make_celery

    with pytest.raises(InvalidInput, match="WORLDBOOK_BROKER_URL"):
        make_celery(WorldbookSettings(broker_url=None, data_dir=tmp_path))


def test_importing_the_module_reads_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workers.celery_app as module

    module = importlib.reload(module)
    assert module._app is None  # nothing built at import
    monkeypatch.setenv("WORLDBOOK_BROKER_URL", CLOSED)
    monkeypatch.setenv("WORLDBOOK_DATA_DIR", str(tmp_path / "data"))
    app = module.app  # what `celery -A workers.celery_app` reads
    assert app.conf.broker_url == CLOSED
    assert module.celery is app


def test_the_index_task_is_thin_and_idempotent(tmp_path: Path) -> None:
    from workers.celery_app import make_celery

    store = open_store(f"sqlite:///{tmp_path / 'wb.db'}")
    book = store.create_book("tester", BookDraft(title="Task world"))
    drafts = [
        EntryDraft(title=f"Place {i}", lore=f"The river town number {i} trades salt.")
        for i in range(5)
    ]
    ids = [e.id for e in store.add_entries(book.id, drafts)]
    embedder = HashingEmbedder()
    built: list[int] = []

    def factory() -> Indexer:
        built.append(1)
        return Indexer(store=store, embedder=embedder, batch_size=2)

    app = make_celery(settings(tmp_path), indexer_factory=factory)
    task = app.tasks[INDEX_TASK]
    assert task.run(ids) == {"indexed": 5, "stale": 0, "failed": {}}
    assert task.run(ids) == {"indexed": 0, "stale": 0, "failed": {}}  # a redelivery
    assert built == [1]  # one indexer per process
    assert embedder.calls == [2, 2, 1]
    assert store.book_index_share(book.id, embedder.model_id) == 1.0
    with pytest.raises(InvalidInput):
        task.run("not a list")
    store.close()


def test_parse_entry_ids_checks_the_payload() -> None:
    assert parse_entry_ids(["a", "b"]) == ["a", "b"]
    for bad in (None, "a", [1, 2], ["a", None]):
        with pytest.raises(InvalidInput):
            parse_entry_ids(bad)
    with pytest.raises(InvalidInput, match=str(MAX_IDS_PER_TASK)):
        parse_entry_ids(["x"] * (MAX_IDS_PER_TASK + 1))


@pytest.mark.parametrize(
    ("args", "scheduler"), [([], True), (["--beat"], True), (["--no-beat"], False)]
)
def test_worker_sweeps_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], scheduler: bool
) -> None:
    """Beat (the periodic sweep) is on unless turned off: a worker started without flags must
    not leave writes made during a broker outage queued forever (ADR 0011). Several workers
    beating at once sweep once per interval (the sweep task takes a Redis lock)."""
    from typer.testing import CliRunner

    import workers.celery_app
    from worldbook.cli.main import app

    started: list[list[str]] = []

    class FakeCelery:
        def worker_main(self, argv: list[str]) -> None:
            started.append(argv)

    monkeypatch.setattr(workers.celery_app, "make_celery", lambda _settings: FakeCelery())
    monkeypatch.setenv("WORLDBOOK_BROKER_URL", CLOSED)
    monkeypatch.setenv("WORLDBOOK_DATA_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["worker", *args])
    assert result.exit_code == 0, result.output
    assert len(started) == 1 and ("--beat" in started[0]) is scheduler
    help_text = CliRunner().invoke(app, ["worker", "--help"]).output
    # rich wraps the help in a box; compare the words only
    assert "a Redis lock" in " ".join(help_text.replace("│", " ").split())


def test_a_worker_with_a_model_queues_glosses_only_for_books_with_readers(tmp_path: Path) -> None:
    from workers.runtime import build_indexer

    def settings(llm_url: str | None = None) -> WorldbookSettings:
        return WorldbookSettings(
            database_url=f"sqlite:///{tmp_path / 'wb.db'}",
            embedder="fake",
            aligned_embedder="",
            data_dir=tmp_path / "data",
            llm_url=llm_url,
        )

    store = open_store(f"sqlite:///{tmp_path / 'wb.db'}")
    try:
        read = store.create_book("u", BookDraft(title="R", settings={"reader_languages": ["ko"]}))
        plain = store.create_book("u", BookDraft(title="P"))
    finally:
        store.close()
    indexer = build_indexer(settings(llm_url="http://127.0.0.1:9/v1"))
    assert indexer.glosses is not None and indexer.gloss_books is not None
    assert indexer.gloss_books([plain.id, read.id]) == [read.id]
    without = build_indexer(settings())
    assert without.glosses is None and without.gloss_books is None
