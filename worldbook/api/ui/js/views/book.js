// One book: its header and tabs (entries, preview, usage, settings, and the glosses and the
// living world's write log when the API has them), then the chosen tab.

import { api, session } from "../api.js";
import { capabilities } from "../capabilities.js";
import { add, badge, h, num } from "../dom.js";
import { renderEntries } from "./entries.js";
import { renderEditor } from "./editor.js";
import { renderGlosses } from "./glosses.js";
import { renderPreview } from "./preview.js";
import { renderUsage } from "./usage.js";
import { renderSettings } from "./settings.js";
import { renderWrites } from "./writes.js";

const TABS = [
  ["entries", "Entries"],
  ["preview", "Preview"],
  ["usage", "Usage"],
  ["settings", "Settings"],
  ["glosses", "Glosses"],
  ["writes", "Write log"],
];

const VIEWS = {
  entries: renderEntries,
  entry: renderEditor,
  "new-entry": renderEditor,
  preview: renderPreview,
  usage: renderUsage,
  settings: renderSettings,
  glosses: renderGlosses,
  writes: renderWrites,
};

export async function renderBook(view, [bookId, tab, itemId]) {
  const [book, caps] = await Promise.all([api.get(`/v1/books/${bookId}`), capabilities()]);
  const render = VIEWS[tab];
  if (!render || (tab === "writes" && !caps.writes) || (tab === "glosses" && !caps.glosses)) {
    window.location.hash = `#/book/${bookId}/entries`;
    return null;
  }
  const active = tab === "entry" || tab === "new-entry" ? "entries" : tab;
  // Usage and the write log describe every reader's turns: the API shows them to the owner only.
  const owner = book.owner_id === session.user;
  const shown = { writes: caps.writes, glosses: caps.glosses };
  const tabs = TABS.filter(([name]) => (!(name in shown) || shown[name]) && (owner || (name !== "usage" && name !== "writes")));
  add(view, 
    h("div", { class: "book-head" },
      h("h1", { tabindex: "-1" }, book.title),
      h("p", { class: "meta" }, badge(book.mode), " ", badge(book.visibility), " ",
        `${num(book.entry_count)} entries`,
        book.trashed ? [" ", badge("in the trash", "warn")] : null)),
    h("nav", { class: "tabs", "aria-label": "Book" }, tabs.map(([name, label]) =>
      h("a", { href: `#/book/${book.id}/${name}`, "aria-current": name === active ? "page" : null }, label))));
  const body = h("div", { class: "tab-body" });
  add(view, body);
  return render(body, { book, caps, itemId });
}
