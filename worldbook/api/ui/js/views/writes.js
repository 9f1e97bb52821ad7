// The living world's write log: what the model wrote into the book during play, newest
// first, each with an undo. Shown only when the API has the routes (see capabilities.js).
// The log's exact shape belongs to the living-world API, so rows are read defensively: the
// common fields are shown when present and the rest of a write is shown as JSON.

import { api } from "../api.js";
import { add, badge, h, toast, when } from "../dom.js";

const SHOWN = new Set(["id", "write_id", "created_at", "at", "action", "kind", "op", "operation",
  "entry_id", "title", "entry_title", "undone", "undone_at", "book_id", "reason", "summary"]);

function writesOf(body) {
  if (Array.isArray(body)) return body;
  const list = Object.values(body || {}).find(Array.isArray);
  return list || [];
}

function writeItem(write, undoPath, onUndone) {
  const id = write.id || write.write_id;
  const undone = Boolean(write.undone || write.undone_at);
  const action = write.action || write.kind || write.op || write.operation || "write";
  const title = write.entry_title || write.title || write.entry_id || "";
  const rest = Object.fromEntries(Object.entries(write).filter(([k]) => !SHOWN.has(k)));
  const undo = h("button", { type: "button", disabled: undone || !id, "aria-label": `Undo ${action} ${title}` }, undone ? "Undone" : "Undo");
  undo.addEventListener("click", async () => {
    try {
      await api.post(undoPath.replace(/\{[^}]+\}/, encodeURIComponent(id)));
      toast(`Undid ${action} ${title}.`);
      onUndone();
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return h("li", { class: "card write", dataset: { writeId: id || "" } },
    h("p", { class: "meta" }, badge(action), " ", title ? h("strong", {}, title) : null,
      ` · ${when(write.created_at || write.at)}`, undone ? [" ", badge("undone", "warn")] : null),
    write.summary || write.reason ? h("p", {}, write.summary || write.reason) : null,
    Object.keys(rest).length ? h("details", {}, h("summary", {}, "Details"), h("pre", { class: "prompt" }, JSON.stringify(rest, null, 2))) : null,
    h("div", { class: "actions" }, undo));
}

export async function renderWrites(view, { book, caps }) {
  const list = h("ul", { class: "cards" });
  async function load() {
    const body = await api.get(caps.writes.list.replace(/\{[^}]+\}/, book.id));
    const writes = writesOf(body);
    list.replaceChildren(...writes.map((w) => writeItem(w, caps.writes.undo, () => load().catch((e) => toast(e.message, "error")))));
    if (!writes.length) list.replaceChildren(h("li", { class: "empty" }, "The model has written nothing into this book yet."));
  }
  await load();
  add(view, h("p", { class: "muted" }, "Lore the model added or changed during play. Undo reverts one write."), list);
}
