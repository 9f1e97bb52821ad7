"""The Glosses tab of the lore inspector (ADR 0023) in headless Chromium against a real server
with the real e5-small: the readers' languages as a checked setting, asking for glosses on a
server without a model, a stored gloss listed as generated, embedded by the book's next
indexing, marked in a preview's semantic table, and deleted."""

from __future__ import annotations

import time

import pytest

from tests.ui.conftest import Browser, Server
from tests.ui.test_inspector_browser import run_preview, sign_in, wait_indexed
from worldbook.adapters.store import open_store
from worldbook.core.glosses import Gloss
from worldbook.settings import WorldbookSettings

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.model]

WOODS = {
    "title": "Le Bois Murmurant",
    "lore": "Dans ce bois les arbres parlent la nuit et les loups se taisent.",
}
FILLER = "Harbour records list cargo, tolls and tides each season. "
KOREAN_NAME, KOREAN_GIST = "속삭이는 숲", "밤이면 나무들이 말하는 숲이다."
ASKED_IN_KOREAN = "밤이면 나무들이 말하는 숲이 있다던데, 거기에 가 봤어?"
FIELD = "settings.reader_languages"


def _save_gloss(server: Server, book_id: str, entry_id: str) -> None:
    """A Korean gloss stored as a model would have written it (this server has no model)."""
    store = open_store(WorldbookSettings(data_dir=server.data_dir).resolved_database_url())
    try:
        entry = store.get_entries(book_id, [entry_id])[0]
        gloss = Gloss(entry.id, "ko", KOREAN_NAME, KOREAN_GIST, entry.content_hash, "a-model")
        assert store.save_glosses(book_id, [gloss]) == 1
    finally:
        store.close()


def _wait_found_by_gloss(server: Server, book_id: str) -> None:
    """Until a Korean preview says the French entry was found by its gloss (the vector is
    embedded after the indexing it rides on, and the gloss view rebuilds in the background)."""
    deadline = time.monotonic() + 120
    body = {"book_ids": [book_id], "message": ASKED_IN_KOREAN, "input_window": 8192}
    reasons: dict[str, str] = {}
    while time.monotonic() < deadline:
        trace = server.call("POST", "/v1/preview", body)["trace"]
        reasons = {row["title"]: row["reason"] for row in trace}
        if "gloss" in reasons.get(WOODS["title"], ""):
            return
        time.sleep(0.5)
    raise AssertionError(f"never found by its gloss: {reasons.get(WOODS['title'])}")


def test_the_glosses_tab(browser: Browser, server: Server) -> None:
    book_id = server.call("POST", "/v1/books", {"title": "Murmurs"})["id"]
    fillers = [{"title": f"Ledger {i}", "lore": FILLER * (i % 3 + 8)} for i in range(40)]
    batch = {"entries": [WOODS, *fillers]}
    woods_id = server.call("POST", f"/v1/books/{book_id}/entries/batch", batch)[0]["id"]
    wait_indexed(server, book_id)
    page = browser.page
    sign_in(browser, server)
    page.goto(f"{server.base}/ui/#/book/{book_id}/glosses")
    page.wait_for_selector("#glosses")
    assert "No readers' languages" in page.locator("#glosses").inner_text()

    # The server checks the codes: an unknown one is shown on the field, nothing is saved.
    page.fill(f"input[name='{FIELD}']", "ko, xx")
    page.click("button:text-is('Save languages')")
    page.wait_for_selector(f"[data-field='{FIELD}'] .field-error:has-text('xx')")
    assert "reader_languages" not in server.call("GET", f"/v1/books/{book_id}")["settings"]
    page.fill(f"input[name='{FIELD}']", "ko")
    page.click("button:text-is('Save languages')")
    page.wait_for_selector('.toast:has-text("Readers\' languages saved.")')
    assert server.call("GET", f"/v1/books/{book_id}")["settings"]["reader_languages"] == ["ko"]
    page.wait_for_selector("#glosses:has-text('No glosses yet')")

    # This server has no language model: asking says which setting gives it one.
    page.click("#write-glosses")
    page.wait_for_selector(".toast:has-text('WORLDBOOK_LLM_URL')")

    # A gloss a model wrote earlier is embedded with the book's next indexing, no model needed.
    _save_gloss(server, book_id, woods_id)
    more = {"title": "Ledger extra", "lore": FILLER * 8}
    server.call("POST", f"/v1/books/{book_id}/entries", more)
    _wait_found_by_gloss(server, book_id)
    page.reload()
    row = page.locator("#glosses tbody tr")
    page.wait_for_selector("#glosses tbody tr")
    assert row.count() == 1
    cells = row.first.locator("td").all_inner_texts()
    assert cells == [WOODS["title"], "ko", KOREAN_NAME, KOREAN_GIST, "generated a-model"]
    browser.shot("20-glosses")

    # A Korean preview marks the French entry as found by its gloss.
    page.goto(f"{server.base}/ui/#/book/{book_id}/preview")
    page.wait_for_selector("textarea[name=message]")
    run_preview(browser, message=ASKED_IN_KOREAN)
    found = page.locator("#semantic tbody tr", has_text=WOODS["title"]).first
    assert "found by its ko gloss" in found.locator("td").first.inner_text()
    browser.shot("21-preview-gloss")

    page.goto(f"{server.base}/ui/#/book/{book_id}/glosses")
    page.click("#delete-glosses")
    page.wait_for_selector(".toast:has-text('Deleted 1 glosses.')")
    page.wait_for_selector("#glosses:has-text('No glosses yet')")
    assert server.call("GET", f"/v1/books/{book_id}/glosses")["glosses"] == []
