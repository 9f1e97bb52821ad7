"""An edited entry's old vectors are never used (DESIGN §2 rule 6), also while a served process
keeps answering from the vector index built before the edit (ADR 0008).

Real SQLite store and FAISS index, fake embedder: the bug this pins was in how the two meet
(the cached index still held the entry's old rows and the turn took them as current).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from worldbook.adapters.faiss_index import FaissIndex
from worldbook.adapters.store import open_store
from worldbook.core.drafts import BookDraft, EntryDraft
from worldbook.core.types import ModelProfile
from worldbook.service import library
from worldbook.service.cast import BookSource
from worldbook.service.components import Components
from worldbook.service.contract import SelectionOut
from worldbook.service.indexing import index_now
from worldbook.service.turns import preview
from worldbook.settings import WorldbookSettings
from worldbook.testing import HashingEmbedder

PROFILE = ModelProfile(input_window=8192, tokenizer_id="estimate")
FILLER = "Lore long enough to pass the twenty character minimum of an entry. " * 12
QUESTION = "Tell me about the copper bells that ring under the harbour water."


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[Components]:
    settings = WorldbookSettings(data_dir=tmp_path, embedder="fake")
    store = open_store(f"sqlite:///{tmp_path / 'worldbook.db'}")
    built = Components(settings, store=store, embedder=HashingEmbedder(), start_queue=False)
    yield built
    built.close()
    store.close()


def _fates(parts: Components, book_id: str) -> dict[str, tuple[str, str]]:
    result = preview(
        parts.services,
        user_id="alice",
        source=BookSource(book_ids=(book_id,)),
        message=QUESTION,
        profile=PROFILE,
    )
    body = SelectionOut.model_validate(result.to_json())
    return {t.title: (t.decision, t.reason) for t in body.trace if t.entry_id}


def test_an_edited_entry_never_ranks_by_its_old_vectors(parts: Components) -> None:
    services = parts.services
    index = services.vector_index
    assert isinstance(index, FaissIndex)
    book = library.create_book(services, "alice", BookDraft(title="Harbour"))
    drafts = [EntryDraft(f"Topic {i}", f"{FILLER} Number {i}.") for i in range(30)]
    drafts.append(
        EntryDraft("Drowned Chapel", f"{FILLER} Copper bells ring under the harbour water.")
    )
    entries = services.store.add_entries(book.id, drafts)
    index_now(services, [e.id for e in entries])
    chapel = entries[-1]
    decision, reason = _fates(parts, book.id)["Drowned Chapel"]
    assert decision == "injected" and reason.startswith("semantic"), reason

    # The edit: the chapel's text is now about something else, its vectors are not redone
    # yet, and the FAISS build cached above still holds its rows from the old text.
    library.update_entry(
        services, "alice", chapel.id, {"lore": f"{FILLER} A quiet stone house with no bells."}
    )
    assert book.id in index.cached_books
    decision, reason = _fates(parts, book.id)["Drowned Chapel"]
    assert not reason.startswith("semantic"), reason
    assert "not indexed yet" in reason, reason

    # Re-embedded: the new build (made in the background) scores the new text.
    index_now(services, [chapel.id])
    services.sync_vector_index(services.store.get_book(book.id))
    assert index.wait_idle(10)
    assert services.vector_index.indexed_entries(book.id).current(
        chapel.id, services.store.get_entry(chapel.id).content_hash
    )
    decision, reason = _fates(parts, book.id)["Drowned Chapel"]
    assert "not indexed yet" not in reason, reason
