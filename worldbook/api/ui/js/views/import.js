// Import a lorebook file (SillyTavern, Character Card V3, …) as a new book: drag and drop or
// pick a file; the importer's warnings are shown grouped by the entry they concern.

import { api } from "../api.js";
import { capabilities } from "../capabilities.js";
import { add, badge, h, num, toast } from "../dom.js";

// Importer warnings read `entries["3"] 'Title': what happened`; anything else is book-level.
const ENTRY_WARNING = /^entries\[(.+?)\](?: '(.*?)')?: (.*)$/;

/** Group warnings by entry: [{entry, title, messages}], book-level ones under entry null. */
export function groupWarnings(warnings) {
  const groups = new Map();
  for (const warning of warnings) {
    const match = ENTRY_WARNING.exec(warning);
    const key = match ? match[1] : null;
    if (!groups.has(key)) groups.set(key, { entry: key, title: match ? match[2] : null, messages: [] });
    groups.get(key).messages.push(match ? match[3] : warning);
  }
  return [...groups.values()];
}

function report(result) {
  const groups = groupWarnings(result.warnings);
  return h("section", { class: "card", "aria-labelledby": "import-result" },
    h("h2", { id: "import-result" }, `Imported “${result.title}”`),
    h("p", {}, `${num(result.entries)} entries from a ${result.format} file`,
      result.resumed ? " (resumed an earlier, interrupted import)" : "", ". ",
      "Entries are indexed in the background; the book works by list order until then."),
    groups.length
      ? h("div", { class: "warnings" },
        h("h3", {}, `${num(result.warnings.length)} importer warnings`),
        h("ul", {}, groups.map((g) => h("li", { class: "warning-group" },
          g.entry === null ? h("strong", {}, "Book") : h("strong", {}, `Entry ${g.entry}`, g.title ? ` · ${g.title}` : ""),
          h("ul", {}, g.messages.map((m) => h("li", {}, m)))))))
      : h("p", {}, badge("no warnings", "ok")),
    h("div", { class: "actions" },
      h("a", { class: "button primary", href: `#/book/${result.book_id}/entries` }, "Open the book")));
}

export async function renderImport(view) {
  const caps = await capabilities();
  const input = h("input", { type: "file", id: "import-file", accept: ".json,.png,.charx,.txt,application/json,image/png", class: "visually-hidden" });
  const mode = h("select", { id: "import-mode" }, caps.modes.map((m) => h("option", { value: m }, m)));
  const output = h("div", { "aria-live": "polite" });
  const zone = h("div", { class: "dropzone", id: "dropzone" },
    h("p", {}, "Drop a lorebook file here, or"),
    input, // visually hidden but focusable: Tab reaches it, and its label shows the focus
    h("label", { for: "import-file", class: "button file-button" }, "Choose a file…"),
    h("p", { class: "hint" }, "SillyTavern World Info, Character Card V2/V3 (JSON or PNG), and other formats the server reads. At most 500 entries per file here; larger books: worldbook import."));

  async function send(file) {
    output.replaceChildren(h("p", { class: "loading" }, `Importing ${file.name}…`));
    try {
      const result = await api.upload("/v1/books/import", file, { mode: mode.value, filename: file.name });
      output.replaceChildren(report(result));
      toast(`Imported ${num(result.entries)} entries.`);
    } catch (error) {
      output.replaceChildren(h("p", { class: "form-error", role: "alert" }, error.message));
    }
  }

  input.addEventListener("change", () => { if (input.files[0]) send(input.files[0]); });
  // Drag and drop: the zone must cancel dragover for the browser to allow a drop at all.
  zone.addEventListener("dragover", (event) => { event.preventDefault(); zone.classList.add("over"); });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) send(file);
    else toast("Drop a file (not text or a link).", "error");
  });
  add(view, 
    h("h1", { tabindex: "-1" }, "Import a lorebook"),
    h("div", { class: "field" }, h("label", { for: "import-mode" }, "Import as a book in mode"), mode),
    zone,
    output);
}
