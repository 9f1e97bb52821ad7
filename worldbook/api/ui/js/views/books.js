// Book shelves: my books (and a new book), the public library (copy a book), the trash
// (restore a book).

import { api } from "../api.js";
import { capabilities } from "../capabilities.js";
import { add, badge, h, num, toast, when } from "../dom.js";
import { Form } from "../fields.js";
import { LIMITS, checkText } from "../limits.js";

function bookCard(book, ...actions) {
  return h("li", { class: "card book", dataset: { bookId: book.id } },
    h("h2", {}, book.trashed ? book.title : h("a", { href: `#/book/${book.id}/entries` }, book.title)),
    h("p", { class: "meta" },
      badge(book.mode), " ", badge(book.visibility), " ",
      `${num(book.entry_count)} entries · changed ${when(book.updated_at)}`),
    book.description ? h("p", { class: "muted clamp" }, book.description) : null,
    book.tags.length ? h("p", { class: "tags" }, book.tags.map((t) => badge(t, "tag"))) : null,
    actions.length ? h("div", { class: "actions" }, actions) : null);
}

function shelf(books, empty, actions = () => []) {
  if (!books.length) return h("p", { class: "empty" }, empty);
  return h("ul", { class: "cards" }, books.map((book) => bookCard(book, ...actions(book))));
}

function searchForm(onSearch, placeholder) {
  const q = h("input", { type: "search", name: "q", placeholder, "aria-label": "Title contains" });
  const tag = h("input", { type: "search", name: "tag", placeholder: "tag", "aria-label": "Tag" });
  const form = h("form", { class: "search", role: "search" }, q, tag,
    h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    onSearch(q.value.trim(), tag.value.trim());
  });
  return form;
}

/** A small form for a new, empty book. */
async function newBookForm() {
  const caps = await capabilities();
  const form = new Form({ onChange: () => { create.disabled = !form.valid(); } });
  const create = h("button", { type: "submit", class: "primary" }, "Create book");
  const element = h("form", { class: "card", novalidate: true, "aria-labelledby": "new-book" },
    h("h2", { id: "new-book" }, "New book"),
    h("div", { class: "row" },
      form.add({
        name: "title", label: "Title", max: LIMITS.book_title_max,
        check: (v) => checkText(v, { max: LIMITS.book_title_max, required: true, label: "Title" }),
      }),
      form.add({ name: "mode", label: "Mode", kind: "select", value: "world",
        options: caps.modes.map((m) => [m, m]) }),
      form.add({ name: "visibility", label: "Visibility", kind: "select", value: "private",
        options: caps.visibilities.map((v) => [v, v]) })),
    form.general,
    h("div", { class: "actions" }, create));
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.validate()) return;
    try {
      const book = await api.post("/v1/books", {
        title: form.value("title"), mode: form.value("mode"), visibility: form.value("visibility"),
      });
      toast(`Created “${book.title}”.`);
      window.location.hash = `#/book/${book.id}/entries`;
    } catch (error) {
      form.showError(error);
    }
  });
  return element;
}

// A card's button: `act(book)` on click, its failure shown as an error toast.
function bookButton(label, act) {
  return (book) => h("button", {
    type: "button",
    onClick: () => act(book).catch((error) => toast(error.message, "error")),
  }, label);
}

export async function renderBooks(view) {
  const list = h("div", { "aria-live": "polite" });
  async function load(q = "", tag = "") {
    const { books } = await api.get("/v1/books", { query: { q, tag, limit: 200 } });
    list.replaceChildren(shelf(books, q || tag ? "No book matches." : "No books yet: create one or import a file."));
  }
  await load();
  add(view, 
    h("h1", { tabindex: "-1" }, "My books"),
    searchForm((q, tag) => load(q, tag).catch((e) => toast(e.message, "error")), "title contains"),
    list,
    await newBookForm());
}

export async function renderLibrary(view) {
  const list = h("div", { "aria-live": "polite" });
  const copy = bookButton("Copy to my books", async (book) => {
    const mine = await api.post(`/v1/books/${book.id}/copy`);
    toast(`Copied “${book.title}” into your books.`);
    window.location.hash = `#/book/${mine.id}/entries`;
  });
  async function load(q = "", tag = "") {
    const { books } = await api.get("/v1/library", { query: { q, tag, limit: 200 } });
    list.replaceChildren(shelf(books, "No public book matches.", (book) => [copy(book)]));
  }
  await load();
  add(view, 
    h("h1", { tabindex: "-1" }, "Library"),
    h("p", { class: "muted" }, "Public books. A copy is yours to edit, private until you publish it."),
    searchForm((q, tag) => load(q, tag).catch((e) => toast(e.message, "error")), "title contains"),
    list);
}

export async function renderTrash(view) {
  const list = h("div", { "aria-live": "polite" });
  const restore = bookButton("Restore", async (book) => {
    await api.post(`/v1/books/${book.id}/restore`);
    toast(`Restored “${book.title}”.`);
    await load();
  });
  async function load() {
    const { books } = await api.get("/v1/books", { query: { trashed: true, limit: 200 } });
    list.replaceChildren(shelf(books, "The trash is empty.", (book) => [restore(book)]));
  }
  await load();
  add(view, 
    h("h1", { tabindex: "-1" }, "Trash"),
    h("p", { class: "muted" }, "Books moved to the trash are kept, unused by any turn, until restored."),
    list);
}
