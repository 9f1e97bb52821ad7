"""Glosses in the store (ADR 0023): SQLite, PostgreSQL and the in-memory fake.

A gloss lives in its own table, is current only while its content hash is its entry's, and goes
with its entry (deletion, purge); copying a book leaves glosses behind (they are regenerated).
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from worldbook.adapters.store import SqlStore, upgrade_database
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.glosses import Gloss
from worldbook.errors import InvalidInput

LORE = "Lore long enough to pass the twenty character minimum."
MODEL = "smollm2-135m"


def _book(store: SqlStore, title: str = "Atlas", n: int = 2) -> tuple[str, list[tuple[str, str]]]:
    """A book of ``n`` entries; returns its id and each entry's (id, content hash)."""
    book = store.create_book("alice", BookDraft(title=title))
    drafts = [EntryDraft(title=f"{title} {i}", lore=f"{LORE} #{i}") for i in range(n)]
    return book.id, [(e.id, e.content_hash) for e in store.add_entries(book.id, drafts)]


def _gloss(entry: tuple[str, str], language: str, name: str = "Nom") -> Gloss:
    return Gloss(entry[0], language, name, f"Un résumé de {name}.", entry[1], MODEL)


def test_save_and_read_back_in_list_then_language_order(store: SqlStore) -> None:
    book_id, (first, second) = _book(store)
    glosses = [_gloss(second, "fr"), _gloss(first, "fr"), _gloss(first, "de", "Name")]
    assert store.save_glosses(book_id, glosses) == 3
    assert store.book_glosses(book_id) == [glosses[2], glosses[1], glosses[0]]
    assert store.save_glosses(book_id, []) == 0
    other_id, _ = _book(store, "Other")
    assert store.book_glosses(other_id) == []


def test_saving_again_replaces_the_pair(store: SqlStore) -> None:
    book_id, (first, _) = _book(store)
    store.save_glosses(book_id, [_gloss(first, "fr", "Ancien")])
    newer = _gloss(first, "fr", "Nouveau")
    assert store.save_glosses(book_id, [newer]) == 1
    assert store.book_glosses(book_id) == [newer]
    # A pair repeated in one batch: the last is kept and counted once.
    last = _gloss(first, "fr", "Dernier")
    assert store.save_glosses(book_id, [_gloss(first, "fr", "Premier"), last]) == 1
    assert store.book_glosses(book_id) == [last]


def test_a_stale_gloss_is_skipped_on_save_and_hidden_after_an_edit(store: SqlStore) -> None:
    book_id, (first, second) = _book(store)
    stale = Gloss(first[0], "fr", "Nom", "Un résumé.", "0" * 64, MODEL)
    assert store.save_glosses(book_id, [stale, _gloss(second, "fr")]) == 1
    assert [g.entry_id for g in store.book_glosses(book_id)] == [second[0]]
    store.save_glosses(book_id, [_gloss(first, "fr")])
    edited = store.update_entry(first[0], lore=LORE + " Edited.")
    assert [g.entry_id for g in store.book_glosses(book_id)] == [second[0]]
    # Written from the new text, it is current again.
    assert store.save_glosses(book_id, [_gloss((edited.id, edited.content_hash), "fr")]) == 1
    assert [g.entry_id for g in store.book_glosses(book_id)] == [first[0], second[0]]


def test_entries_of_another_book_or_gone_are_skipped(store: SqlStore) -> None:
    book_id, (first, _) = _book(store)
    other_id, (foreign, _) = _book(store, "Other")
    assert store.save_glosses(book_id, [_gloss(foreign, "fr")]) == 0
    assert store.book_glosses(other_id) == [] and store.book_glosses(book_id) == []
    missing = ("no-such-entry", first[1])
    assert store.save_glosses(book_id, [_gloss(missing, "fr"), _gloss(first, "fr")]) == 1
    assert store.save_glosses("no-such-book", [_gloss(first, "de")]) == 0
    assert [g.language for g in store.book_glosses(book_id)] == ["fr"]


def test_deleting_an_entry_or_purging_the_book_removes_its_glosses(store: SqlStore) -> None:
    book_id, (first, second) = _book(store)
    store.save_glosses(book_id, [_gloss(first, "fr"), _gloss(second, "fr")])
    store.delete_entries(book_id, [first[0]])
    assert [g.entry_id for g in store.book_glosses(book_id)] == [second[0]]
    assert store.delete_glosses(book_id) == 1  # nothing of the deleted entry left behind
    store.save_glosses(book_id, [_gloss(second, "fr")])
    store.purge_book(book_id)
    assert store.book_glosses(book_id) == []
    assert store.delete_glosses(book_id) == 0


def test_delete_glosses_of_some_languages(store: SqlStore) -> None:
    book_id, (first, second) = _book(store)
    other_id, (foreign, _) = _book(store, "Other")
    store.save_glosses(book_id, [_gloss(e, lang) for e in (first, second) for lang in ["de", "fr"]])
    store.save_glosses(other_id, [_gloss(foreign, "fr")])
    assert store.delete_glosses(book_id, ["fr", "ja"]) == 2
    assert [(g.entry_id, g.language) for g in store.book_glosses(book_id)] == [
        (first[0], "de"),
        (second[0], "de"),
    ]
    assert store.delete_glosses(book_id, []) == 0
    # Stale glosses are deleted too (they are still rows).
    store.update_entry(first[0], lore=LORE + " Edited.")
    assert store.delete_glosses(book_id) == 2
    assert len(store.book_glosses(other_id)) == 1  # another book's untouched


def test_copy_book_leaves_glosses_behind(store: SqlStore) -> None:
    book_id, (first, _) = _book(store)
    store.save_glosses(book_id, [_gloss(first, "fr")])
    copy = store.copy_book(book_id, "bob")
    assert store.book_glosses(copy.id) == []
    assert len(store.book_glosses(book_id)) == 1


def test_bad_glosses_are_refused_before_anything_is_written(store: SqlStore) -> None:
    book_id, (first, _) = _book(store)
    for bad in (
        [_gloss(first, "fr"), _gloss(first, "xx")],  # not a reader language
        [Gloss(first[0], "fr", "Nom", "Résumé.", first[1], "m" * 256)],
        [Gloss(first[0], "fr", "Nom", "Résumé.", first[1], "")],
        [Gloss(first[0], "fr", "Nom", "Résumé.", "h" * 65, MODEL)],
        [("not", "a", "gloss")],
    ):
        with pytest.raises(InvalidInput):
            store.save_glosses(book_id, bad)  # type: ignore[arg-type]
    assert store.book_glosses(book_id) == []
    with pytest.raises(InvalidInput):
        store.delete_glosses(book_id, "fr")


def test_migration_0008_creates_the_table(empty_database_url: str) -> None:
    upgrade_database(empty_database_url, "0007")
    engine = sa.create_engine(empty_database_url)
    try:
        assert "entry_glosses" not in sa.inspect(engine).get_table_names()
        upgrade_database(empty_database_url)
        found = sa.inspect(engine)
        assert found.get_pk_constraint("entry_glosses")["constrained_columns"] == [
            "entry_id",
            "language",
        ]
        cascades = {
            fk["referred_table"]: fk["options"].get("ondelete")
            for fk in found.get_foreign_keys("entry_glosses")
        }
        assert cascades == {"entries": "CASCADE", "books": "CASCADE"}
        assert [ix["column_names"] for ix in found.get_indexes("entry_glosses")] == [["book_id"]]
    finally:
        engine.dispose()
