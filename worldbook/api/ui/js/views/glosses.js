// A book's glosses (ADR 0023): the entries' names and one-line gists that the app's model
// writes in the languages the book's readers chat in, so a chat in one of them finds lore
// written in another. They are generated views, listed here marked as such; they are never
// exported and never sent as lore. The tab shows only when the API has the routes
// (capabilities.js). The server checks the language codes; the page keeps no copy of them.

import { api, session } from "../api.js";
import { add, badge, dataTable, h, toast } from "../dom.js";
import { Form } from "../fields.js";
import { commaList } from "../limits.js";

const FIELD = "settings.reader_languages";

function reload() {
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

function readersForm(book, editable) {
  const save = h("button", { type: "submit", class: "primary", disabled: !editable }, "Save languages");
  const form = new Form();
  const current = (book.settings || {}).reader_languages || [];
  const element = h("form", { class: "card", novalidate: true, "aria-labelledby": "readers-h" },
    h("h2", { id: "readers-h" }, "Readers' languages"),
    form.add({ name: FIELD, label: "Language codes (comma-separated)", value: current.join(", "),
      placeholder: "ko, pt", hint: "The languages this book's readers chat in, such as ko, pt, zh, it. Empty: no glosses." }),
    form.general, h("div", { class: "actions" }, save));
  if (!editable) form.get(FIELD).input.disabled = true;
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    const codes = commaList(form.value(FIELD));
    const settings = { ...(book.settings || {}) };
    if (codes.length) settings.reader_languages = codes;
    else delete settings.reader_languages;
    try {
      await api.patch(`/v1/books/${book.id}`, { settings });
      toast("Readers' languages saved.");
      reload();
    } catch (error) {
      form.showError(error);
    }
  });
  return element;
}

function actions(book) {
  const write = h("button", { type: "button", class: "primary", id: "write-glosses" }, "Write glosses");
  const remove = h("button", { type: "button", class: "danger", id: "delete-glosses" }, "Delete all glosses");
  write.addEventListener("click", async () => {
    try {
      await api.post(`/v1/books/${book.id}/glosses`);
      toast("Asked: the app's model writes the missing glosses in the background.");
    } catch (error) {
      toast(error.message, "error");
    }
  });
  remove.addEventListener("click", async () => {
    try {
      const { deleted } = await api.del(`/v1/books/${book.id}/glosses`);
      toast(`Deleted ${deleted} glosses.`);
      reload();
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return h("div", { class: "actions" }, write, remove);
}

async function glossTable(book) {
  const body = await api.get(`/v1/books/${book.id}/glosses`);
  const rows = body.glosses.map((g) => ({
    data: { entryId: g.entry_id, language: g.language },
    cells: [g.entry_title || g.entry_id, g.language, g.name, g.gist, [badge("generated"), " ", g.model]],
  }));
  const empty = body.reader_languages.length
    ? "No glosses yet: they are written after indexing when the server has a language model."
    : "No readers' languages: this book has no glosses.";
  return dataTable("Glosses", ["Entry", "Language", "Name", "Gist", "Written by"], rows, empty);
}

export async function renderGlosses(view, { book }) {
  const owner = book.owner_id === session.user;
  const editable = owner && !book.trashed;
  const list = h("section", { class: "card", id: "glosses", "aria-labelledby": "glosses-h" },
    h("h2", { id: "glosses-h" }, "Glosses"),
    h("p", { class: "muted" }, "Written by the app's model from each entry's text, in every readers' language but the entry's own. "
      + "A chat in one of those languages finds the entry through its gloss; the gloss itself is never exported or sent as lore."),
    editable ? actions(book) : null,
    await glossTable(book));
  add(view, readersForm(book, editable), list);
}
