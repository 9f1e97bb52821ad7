"""The lore inspector in a real headless Chromium against a real server (docs/design/inspector.md).

Each test writes screenshots of the screens it visits to ``test-output/ui-screenshots/`` (or
``$WORLDBOOK_UI_SCREENSHOTS``); the fixtures fail a test whose page contacted any other host or
raised a JavaScript error.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ui.conftest import ELDORIA, Browser, Server
from worldbook.core.limits import weighted_length

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.model]

needs_eldoria = pytest.mark.skipif(
    not ELDORIA.is_file(), reason=f"{ELDORIA} is absent (the shared samples live beside the repo)"
)


# --- helpers ---------------------------------------------------------------------------------


def sign_in(b: Browser, server: Server, user: str = "alice") -> None:
    page = b.page
    page.goto(server.base + "/ui/#/signin")
    page.fill("input[name=api_key]", server.key)
    page.fill("input[name='X-Worldbook-User']", user)
    page.click("form button[type=submit]")
    page.wait_for_selector("h1:text-is('My books')")


def wait_indexed(server: Server, book_id: str, user: str = "alice") -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        state = server.call("GET", f"/v1/books/{book_id}/index", user=user)
        if state["indexed_share"] >= 1.0:
            return
        time.sleep(0.25)
    raise AssertionError(f"book {book_id} was not indexed in 120 s")


def titles_in_order(server: Server, book_id: str) -> list[str]:
    return [e["title"] for e in server.call("GET", f"/v1/books/{book_id}/entries")["entries"]]


def entry_id(server: Server, book_id: str, title: str) -> str:
    entries = server.call("GET", f"/v1/books/{book_id}/entries")["entries"]
    return next(e["id"] for e in entries if e["title"] == title)


def first_row_is(b: Browser, title: str) -> None:
    b.page.wait_for_function(
        "(t) => document.querySelector('li.entry a.entry-title').textContent === t", arg=title
    )


def row(b: Browser, title: str) -> Any:
    return b.page.locator("li.entry", has=b.page.locator(f"a.entry-title:text-is('{title}')"))


def rows_in_order(b: Browser) -> list[str]:
    return b.page.locator("li.entry a.entry-title").all_inner_texts()


@pytest.fixture
def eldoria(server: Server) -> Iterator[str]:
    """Eldoria imported through the API, indexed, with 'eldoria' as canon."""
    body = json.loads(ELDORIA.read_text(encoding="utf-8")) if ELDORIA.is_file() else None
    if body is None:
        pytest.skip(f"{ELDORIA} is absent (the shared samples live beside the repo)")
    book = server.call("POST", "/v1/books/import?filename=Eldoria.json", body)
    wait_indexed(server, book["book_id"])
    server.call(
        "PATCH", f"/v1/entries/{entry_id(server, book['book_id'], 'eldoria')}", {"canon": True}
    )
    yield book["book_id"]


# --- sign-in ---------------------------------------------------------------------------------


def test_sign_in_checks_the_key_and_keeps_it_in_the_tab_only(
    browser: Browser, server: Server
) -> None:
    page = browser.page
    page.goto(server.base + "/ui")
    page.wait_for_selector("h1:text-is('Sign in')")
    assert page.url.endswith("/ui/#/signin")
    page.fill("input[name=api_key]", "wb_not-a-real-key")
    page.fill("input[name='X-Worldbook-User']", "alice")
    page.click("form button[type=submit]")
    error = page.locator("[data-field=api_key] .field-error")
    error.wait_for()
    assert "unknown or revoked" in error.inner_text()
    assert error.get_attribute("data-source") == "server"
    browser.shot("01-sign-in-error")
    sign_in(browser, server)
    stored = page.evaluate("() => [sessionStorage.length, localStorage.length, document.cookie]")
    assert stored == [2, 0, ""]
    browser.shot("02-books")
    page.click("#sign-out")
    page.wait_for_selector("h1:text-is('Sign in')")
    assert page.evaluate("() => sessionStorage.getItem('worldbook.apiKey')") is None


# --- import, reorder, edit -------------------------------------------------------------------


def drop_file(b: Browser, selector: str, path: Path) -> None:
    """Drop a file on an element the way a user's drag from the desktop does."""
    data = list(path.read_bytes())
    transfer = b.page.evaluate_handle(
        """([bytes, name]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, {type: "application/json"}));
            return transfer;
        }""",
        [data, path.name],
    )
    b.page.dispatch_event(selector, "dragover", {"dataTransfer": transfer})
    b.page.dispatch_event(selector, "drop", {"dataTransfer": transfer})


@needs_eldoria
def test_import_reorder_toggle_and_edit(browser: Browser, server: Server) -> None:
    page = browser.page
    sign_in(browser, server)
    page.click("#nav a:text-is('Import')")
    page.wait_for_selector("#dropzone")
    drop_file(browser, "#dropzone", ELDORIA)
    page.wait_for_selector("h2:text-is('Imported “Eldoria”')")
    groups = page.locator(".warning-group")
    assert groups.count() == 4  # one group per entry the importer warned about
    assert "no usable title" in groups.first.inner_text()
    assert groups.first.locator("strong").inner_text().startswith('Entry "0"')
    browser.shot("03-import")

    page.click("a:text-is('Open the book')")
    page.wait_for_selector("li.entry")
    book_id = page.url.split("#/book/")[1].split("/")[0]
    assert rows_in_order(browser) == ["eldoria", "shadowfang", "glade", "power"]
    page.wait_for_selector(".index-line:has-text('100% indexed')", timeout=120_000)
    page.wait_for_function(
        "() => document.querySelectorAll('.index-state[data-kind=indexed]').length === 4"
    )
    browser.shot("04-entries")

    # Drag "power" above "eldoria": exactly one move request, and the server's order follows.
    before = len([u for u in browser.requests if u.endswith("/entries/move")])
    row(browser, "power").locator(".handle").drag_to(
        row(browser, "eldoria"), target_position={"x": 20, "y": 3}
    )
    first_row_is(browser, "power")
    assert rows_in_order(browser) == ["power", "eldoria", "shadowfang", "glade"]
    assert titles_in_order(server, book_id) == ["power", "eldoria", "shadowfang", "glade"]
    assert len([u for u in browser.requests if u.endswith("/entries/move")]) == before + 1

    # Token counts for another tokenizer; an unknown one is refused on the field.
    before_tokens = row(browser, "power").locator(".tokens").inner_text()
    page.fill("#tokenizer", "estimate:chars-per-token=2")
    page.click("form.inline-form button")
    page.wait_for_selector(".toast:has-text('Token counts for estimate')")
    assert row(browser, "power").locator(".tokens").inner_text() != before_tokens
    page.fill("#tokenizer", "no-such-tokenizer")
    page.click("form.inline-form button")
    page.wait_for_selector("#tokenizer-error:has-text('Unknown tokenizer')")
    page.fill("#tokenizer", "cl100k_base")
    page.click("form.inline-form button")
    page.wait_for_selector("#tokenizer-error", state="hidden")

    # The keyboard way: the "move down" button of "power".
    page.click("button[aria-label='Move power down']")
    first_row_is(browser, "eldoria")
    assert titles_in_order(server, book_id) == ["eldoria", "power", "shadowfang", "glade"]

    # Canon and enabled toggles, then bulk disable / enable.
    row(browser, "eldoria").locator(".toggle-canon input").check()
    page.wait_for_selector(".toast:has-text('eldoria: canon on')")
    page.locator(".canon-cost").first.wait_for()
    entries = {e["title"]: e for e in server.call("GET", f"/v1/books/{book_id}/entries")["entries"]}
    assert entries["eldoria"]["canon"] is True
    for title in ("shadowfang", "glade"):
        row(browser, title).locator("input.select").check()
    page.click(".bulk button[data-action=disable]")
    page.wait_for_selector("li.entry .badge[data-kind=warn]:text-is('disabled')")
    assert [
        e["enabled"] for e in server.call("GET", f"/v1/books/{book_id}/entries")["entries"]
    ] == [
        True,
        True,
        False,
        False,
    ]
    for title in ("shadowfang", "glade"):
        row(browser, title).locator("input.select").check()
    page.click(".bulk button[data-action=enable]")
    page.wait_for_selector(".toast:has-text('enable: 2 entries')")

    # The editor: a title under the minimum is refused as it is typed ...
    row(browser, "glade").locator("a.entry-title").click()
    page.wait_for_selector("form.editor")
    page.fill("input[name=title]", "x")
    title_error = page.locator("[data-field=title] .field-error")
    assert "at least 2 characters" in title_error.inner_text()
    assert page.locator("form.editor button[type=submit]").is_disabled()
    browser.shot("05-editor-limit")
    # ... and what only the server checks comes back on the field it names.
    page.fill("input[name=title]", "Glade\x00of refuge")
    page.click("form.editor button[type=submit]")
    page.wait_for_selector("[data-field=title] .field-error[data-source=server]")
    assert "NUL character" in title_error.inner_text()
    assert page.locator("input[name=title]").evaluate("e => e === document.activeElement")
    browser.shot("06-editor-server-error")
    page.fill("input[name=title]", "Glade")
    page.click("form.editor button[type=submit]")
    page.wait_for_selector(".toast:has-text('Saved “Glade”')")
    assert "Glade" in titles_in_order(server, book_id)


# --- preview ---------------------------------------------------------------------------------


def run_preview(b: Browser, *, message: str | None = None, chat: str | None = None) -> None:
    page = b.page
    page.select_option("#sample-kind", "chat" if chat is not None else "message")
    if chat is not None:
        page.fill("textarea[name=messages]", chat)
    else:
        page.fill("textarea[name=message]", message or "")
    page.fill("input[name=input_window]", "8192")
    page.click("form[aria-label=Preview] button[type=submit]")
    page.wait_for_selector("#in-full")


def in_full(b: Browser) -> dict[str, str]:
    """Title → reason of every entry sent in full."""
    rows = b.page.locator("#in-full tbody tr")
    return {
        rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("td").nth(3).inner_text()
        for i in range(rows.count())
    }


@needs_eldoria
def test_previews_in_french_and_japanese(browser: Browser, server: Server, eldoria: str) -> None:
    page = browser.page
    sign_in(browser, server)
    page.goto(f"{server.base}/ui/#/book/{eldoria}/preview")
    page.wait_for_selector("textarea[name=message]")

    # French, close in meaning: "What are your powers? Can you heal and protect with magic?"
    run_preview(
        browser, message="Quels sont tes pouvoirs ? Sais-tu guérir et protéger par la magie ?"
    )
    # 368: the canon as sent, {{char}} / {{user}} filled with the stand-ins "Character" / "User".
    assert page.locator("#canon .canon-cost").inner_text().startswith("Core canon: 368 tokens")
    assert page.locator("#canon tbody").inner_text().startswith("eldoria")
    full = in_full(browser)
    assert full["power"].startswith("semantic: score"), full
    assert page.locator("#semantic tbody tr").first.locator("td").first.inner_text() == "power"
    assert page.locator("#left-out, #world-index").count() == 2
    browser.shot("07-preview-french")

    # French, named explicitly: "refuge" is an alias of the glade.
    run_preview(browser, message="Où se trouve le refuge ?")
    assert in_full(browser)["glade"].startswith(
        "literal: named as 'refuge' in the last user message"
    )
    literal = page.locator("#literal tbody tr").first.locator("td").all_inner_texts()
    assert literal[:3] == ["glade", "“refuge”", "the last user message"]

    # Japanese, as a short chat: "What are the Shadowfangs? Corrupted beasts that feed on pain?"
    chat = (
        "user: こんにちは。\n"
        "assistant (Seraphina): ようこそ、旅の方。ここは安全です。\n"
        "user: シャドウファングとは何ですか？苦しみを食らう堕落した獣ですか？"
    )
    run_preview(browser, chat=chat)
    full = in_full(browser)
    assert full["shadowfang"].startswith("semantic: score"), full
    every = page.locator(
        "#world-index tbody tr, #left-out tbody tr, #in-full tbody tr, #canon tbody tr"
    )
    assert every.count() == 4  # every entry's fate is shown
    page.click("#prompt summary")
    assert "# Lore for this turn" in page.locator("#prompt").inner_text()
    page.check("input[name=prompt-format][value=anthropic]")
    page.wait_for_selector("#prompt h3:has-text('system block 1')")
    browser.shot("08-preview-japanese")
    page.check("#prompt-json")
    shown = json.loads(page.locator("#prompt pre").inner_text())
    assert set(shown) >= {"system"}


# --- usage -----------------------------------------------------------------------------------


@needs_eldoria
def test_usage_after_three_turns(browser: Browser, server: Server, eldoria: str) -> None:
    # A second canon entry makes canon heavy for the default window; the turns use a small
    # window, so canon takes all of it and two when-relevant entries never surface.
    glade = entry_id(server, eldoria, "glade")
    server.call("PATCH", f"/v1/entries/{glade}", {"canon": True})
    for text in (
        "Quels sont tes pouvoirs ?",
        "Où se trouve le refuge ?",
        "Tell me about the glade.",
    ):
        turn = {"book_ids": [eldoria], "messages": [{"role": "user", "content": text}]}
        server.call("POST", "/v1/select", {**turn, "input_window": 2048})
    page = browser.page
    sign_in(browser, server)
    page.goto(f"{server.base}/ui/#/book/{eldoria}/usage")
    page.wait_for_selector("#turns-served")
    assert page.locator("#turns-served").inner_text() == "3"
    page.wait_for_selector("svg.chart rect.bar[data-turns='3']")
    assert page.locator("svg.chart rect.bar").count() == 30
    most_used = page.locator("#most-used + .table-wrap tbody tr").first.locator("td")
    assert most_used.all_inner_texts()[:3] == ["eldoria canon", "3", "3"]  # canon, every turn
    assert page.locator(".alert:has-text('Heavy canon')").is_visible()
    never = page.locator(".alert:has-text('Never surfaced after 3 turns') li").all_inner_texts()
    assert sorted(never) == ["power", "shadowfang"]
    browser.shot("09-usage")
    page.select_option("#usage-days", "7")
    page.wait_for_function("() => document.querySelectorAll('svg.chart rect.bar').length === 7")


# --- export, visibility error, trash, library -----------------------------------------------


@needs_eldoria
def test_export_settings_trash_and_library(
    browser: Browser, server: Server, eldoria: str, tmp_path: Path
) -> None:
    page = browser.page
    sign_in(browser, server)
    page.goto(f"{server.base}/ui/#/book/{eldoria}/settings")
    page.wait_for_selector("button[data-format=sillytavern]")
    with page.expect_download() as sillytavern:
        page.click("button[data-format=sillytavern]")
    saved = tmp_path / sillytavern.value.suggested_filename
    sillytavern.value.save_as(saved)
    assert saved.name.endswith(".sillytavern.json")
    assert len(json.loads(saved.read_text())["entries"]) == 4
    with page.expect_download() as ccv3:
        page.click("button[data-format=ccv3]")
    card = json.loads(Path(ccv3.value.path()).read_text())
    assert card["spec"] == "lorebook_v3" and len(card["data"]["entries"]) == 4

    # Publishing needs 10 entries: the server says so on the visibility field.
    page.select_option("select[name=visibility]", "public")
    page.click("form[aria-labelledby=settings-h] button[type=submit]")
    error = page.locator("[data-field=visibility] .field-error[data-source=server]")
    error.wait_for()
    assert "10" in error.inner_text()
    browser.shot("10-settings")

    page.click("button:text-is('Move to the trash')")
    page.wait_for_selector("h1:text-is('Trash')")
    page.wait_for_selector(f"li[data-book-id='{eldoria}']")
    browser.shot("11-trash")
    page.click(f"li[data-book-id='{eldoria}'] button:text-is('Restore')")
    page.wait_for_selector(".toast:has-text('Restored')")
    assert server.call("GET", f"/v1/books/{eldoria}")["trashed"] is False

    # Another author's public book, copied from the library.
    shared = server.call(
        "POST", "/v1/books", {"title": "Saltreach atlas", "tags": ["ui-test"]}, user="bob"
    )
    drafts = [
        {"title": f"Harbour {i}", "lore": f"The harbour number {i} of Saltreach, told at length."}
        for i in range(10)
    ]
    server.call("POST", f"/v1/books/{shared['id']}/entries/batch", {"entries": drafts}, user="bob")
    server.call("PATCH", f"/v1/books/{shared['id']}", {"visibility": "public"}, user="bob")
    page.click("#nav a:text-is('Library')")
    page.fill("input[name=tag]", "ui-test")
    page.click("form.search button")
    page.wait_for_selector(f"li[data-book-id='{shared['id']}']")
    browser.shot("12-library")
    page.click(f"li[data-book-id='{shared['id']}'] button:text-is('Copy to my books')")
    page.wait_for_selector("h1:text-is('Saltreach atlas')")
    copy_id = page.url.split("#/book/")[1].split("/")[0]
    assert copy_id != shared["id"]
    assert server.call("GET", f"/v1/books/{copy_id}")["owner_id"] == "alice"


# --- small screens, dark scheme, keyboard ----------------------------------------------------


def no_horizontal_scroll(b: Browser) -> None:
    width = b.page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"the page scrolls sideways at {width[1]} px: {width[0]} px wide"


@needs_eldoria
def test_phone_width_dark_scheme_and_keyboard(phone: Browser, server: Server, eldoria: str) -> None:
    page = phone.page
    page.goto(server.base + "/ui/#/signin")
    page.wait_for_selector("input[name=api_key]")
    # Keyboard only: type the key, Tab to the user, Enter submits.
    page.focus("input[name=api_key]")
    page.keyboard.type(server.key)
    page.keyboard.press("Tab")
    page.keyboard.type("alice")
    page.keyboard.press("Enter")
    page.wait_for_selector("h1:text-is('My books')")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(18, 20, 22)"  # the dark palette
    no_horizontal_scroll(phone)
    phone.shot("13-phone-books")

    page.goto(f"{server.base}/ui/#/book/{eldoria}/entries")
    page.wait_for_selector("li.entry")
    no_horizontal_scroll(phone)
    phone.shot("14-phone-entries")
    # Alt+ArrowDown on a focused row moves it: one write.
    row(phone, "eldoria").locator("a.entry-title").focus()
    page.keyboard.press("Alt+ArrowDown")
    first_row_is(phone, "shadowfang")
    assert titles_in_order(server, eldoria)[:2] == ["shadowfang", "eldoria"]

    page.goto(f"{server.base}/ui/#/book/{eldoria}/preview")
    page.wait_for_selector("textarea[name=message]")
    run_preview(phone, message="Quels sont tes pouvoirs ?")
    no_horizontal_scroll(phone)
    phone.shot("15-phone-preview")
    page.goto(f"{server.base}/ui/#/book/{eldoria}/usage")
    page.wait_for_selector("#turns-served")
    no_horizontal_scroll(phone)
    phone.shot("16-phone-usage")


# --- the page's limit checks are the server's -------------------------------------------------


def test_the_page_counts_lengths_like_the_server(browser: Browser, server: Server) -> None:
    samples = ["ab", "東京", "東", "Ｆｕｌｌ", "한국어", "😀", "a\u0301", "x" * 3, "𠀀𠀁", "ｶﾀｶﾅ"]
    browser.page.goto(server.base + "/ui/#/signin")
    browser.page.wait_for_selector("h1")
    got = browser.page.evaluate(
        """async (texts) => {
            const limits = await import("./js/limits.js");
            return texts.map((t) => [limits.length(t), limits.weightedLength(t)]);
        }""",
        samples,
    )
    assert got == [[len(t), weighted_length(t)] for t in samples]


# --- features the API may or may not have ----------------------------------------------------


def _api_with_living_world(route: Any) -> None:
    """The real /openapi.json with the living-world switch declared as a top-level book field
    (the other shape the page supports; the server keeps it in ``settings``)."""
    doc = route.fetch().json()
    schemas = doc["components"]["schemas"]
    schemas["BookPatch"]["properties"]["living_world"] = {"type": "boolean"}
    doc["paths"]["/v1/books/{book_id}/writes"] = {"get": {"responses": {}}}
    doc["paths"]["/v1/writes/{write_id}/undo"] = {"post": {"responses": {}}}
    route.fulfill(json=doc)


@needs_eldoria
def test_the_page_shows_what_the_api_declares(
    browser: Browser, server: Server, eldoria: str
) -> None:
    page = browser.page
    sign_in(browser, server)
    page.goto(f"{server.base}/ui/#/book/{eldoria}/settings")
    page.wait_for_selector("select[name=mode]")
    modes = page.locator("select[name=mode] option").all_inner_texts()
    assert modes == ["world", "classic", "hybrid"]  # what this server's BookMode accepts
    # The server keeps the living-world switch in the book's settings and has the write log.
    assert page.locator("input[name='settings.living_world']").count() == 1
    assert page.locator("nav.tabs a:text-is('Write log')").count() == 1

    undone: list[str] = []

    def writes(route: Any) -> None:
        route.fulfill(
            json={
                "writes": [
                    {
                        "id": "w1",
                        "action": "create",
                        "entry_title": "The drowned bell",
                        "created_at": "2026-12-01T10:00:00Z",
                        "undone": "w1" in undone,
                        "summary": "Added after the harbour scene.",
                    }
                ]
            }
        )

    def undo(route: Any) -> None:
        undone.append(route.request.url.rsplit("/", 2)[-2])
        route.fulfill(json={"undone": True})

    page.route("**/openapi.json", _api_with_living_world)
    page.route(f"**/v1/books/{eldoria}/writes", writes)
    page.route("**/v1/writes/*/undo", undo)
    page.reload()
    page.wait_for_selector("select[name=mode]")
    assert page.locator("select[name=mode] option").all_inner_texts() == [
        "world",
        "classic",
        "hybrid",
    ]
    assert page.locator("input[name=living_world]").count() == 1
    page.click("nav.tabs a:text-is('Write log')")
    page.wait_for_selector("li.write[data-write-id=w1]")
    assert "The drowned bell" in page.locator("li.write").inner_text()
    page.click("li.write button:text-is('Undo')")
    page.wait_for_selector("li.write button:text-is('Undone')")
    assert undone == ["w1"]
    browser.shot("17-write-log")


def correct_and_submit(page: Any, tag: str, name: str, *, bad: str, error: str, good: str) -> None:
    """Types ``bad`` into the editor's field ``name`` (its error, shown as typed, says
    ``error``), corrects it to ``good`` and submits the form."""
    page.fill(f"{tag}[name={name}]", bad)
    assert error in page.locator(f"[data-field={name}] .field-error").inner_text()
    page.fill(f"{tag}[name={name}]", good)
    page.click("form.editor button[type=submit]")


def test_classic_fields_only_in_books_that_use_them(browser: Browser, server: Server) -> None:
    lore = "A harbour bell that rings before storms."
    made = {}
    for mode in ("world", "classic"):
        book = server.call("POST", "/v1/books", {"title": f"Bells ({mode})", "mode": mode})
        entry = server.call(
            "POST", f"/v1/books/{book['id']}/entries", {"title": "Bell", "lore": lore}
        )
        made[mode] = (book["id"], entry["id"])
    page = browser.page
    sign_in(browser, server)
    for mode, (book_id, entry_id_) in made.items():
        page.goto(f"{server.base}/ui/#/book/{book_id}/entry/{entry_id_}")
        page.wait_for_selector("form.editor input[name=title]")
        assert page.locator("fieldset.classic").count() == (mode == "classic")
    # A classic field round-trips: keys, one per line, saved as a list.
    page.fill("textarea[name=keys]", "bell\nstorm bell")
    correct_and_submit(page, "input", "priority", bad="12x", error="whole number", good="12")
    page.wait_for_selector(".toast:has-text('Saved')")
    saved = server.call("GET", f"/v1/entries/{made['classic'][1]}")
    assert (saved["keys"], saved["priority"]) == (["bell", "storm bell"], 12)
    browser.shot("18-editor-classic")

    # A new entry from the list's button, in the world book.
    page.goto(f"{server.base}/ui/#/book/{made['world'][0]}/entries")
    page.click("a:text-is('New entry')")
    page.wait_for_selector("form.editor h2:text-is('New entry')")
    page.fill("input[name=title]", "Storm bell")
    good = "It rings by itself an hour before a storm reaches the bay."
    correct_and_submit(
        page, "textarea", "lore", bad="short", error="at least 20 characters", good=good
    )
    page.wait_for_selector("form.editor h2:text-is('Storm bell')")
    assert "Storm bell" in titles_in_order(server, made["world"][0])


# --- connect an app (ADR 0017) ---------------------------------------------------------------


def test_connect_an_app_shows_the_three_values_once(browser: Browser, server: Server) -> None:
    book = server.call("POST", "/v1/books", {"title": "Proxy world"})
    sign_in(browser, server)
    page = browser.page
    page.click("#nav a[data-nav=connect]")
    page.wait_for_selector("h1:text-is('Connect an app')")
    page.fill("input[type=url]", "http://127.0.0.1:9/v1")
    page.fill("label:has-text('Model (optional)') input", "smol-fixed")
    page.check(f"input[type=checkbox][value='{book['id']}']")
    page.click("form button[type=submit]")
    page.wait_for_selector("#paste-title")
    browser.shot("connect-an-app")
    token = page.input_value("input[aria-label='API key']")
    base = page.input_value("input[aria-label='Base URL']")
    assert token.startswith("wbc_") and base == server.base + "/openai/v1"
    assert page.input_value("input[aria-label='Model']") == "smol-fixed"
    request = urllib.request.Request(base + "/models", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        assert json.loads(response.read())["data"][0]["id"] == "smol-fixed"
    page.reload()
    page.wait_for_selector("h1:text-is('Connect an app')")
    assert token not in page.content()  # shown once
