// The entry list of a book, in book order: reorder, canon / enabled toggles, token counts for
// a chosen tokenizer, index state, and bulk enable / disable / delete (≤ 500 at once).

import { api } from "../api.js";
import { add, h, num, toast } from "../dom.js";
import { LIMITS } from "../limits.js";
import { enableDragAndDrop, entryRow, indexBadge, neighbourMove, sendMove } from "./entry_rows.js";

const TOKENIZER_KEY = "worldbook.tokenizer";
const POLL_MS = 3000;

function canonLine(page) {
  const text = `Core canon: ${num(page.canon_tokens)} tokens every turn (budget ${num(page.canon_budget)} for the default input window).`;
  if (!page.canon_heavy) return h("p", { class: "canon-cost" }, text);
  return h("p", { class: "canon-cost alert", role: "note" }, text,
    " Heavy: canon takes most of its budget, leaving little for the lore each turn needs.");
}

function indexLine(state) {
  const counts = Object.entries(state.counts).map(([k, v]) => `${num(v)} ${k}`).join(" · ");
  const share = Math.round(state.indexed_share * 100);
  return h("p", { class: "index-line muted" },
    `Index (${state.model_id}): ${share}% indexed`, counts ? ` — ${counts}` : "");
}

export async function renderEntries(view, { book }) {
  const editable = !book.trashed;
  let tokenizer = sessionStorage.getItem(TOKENIZER_KEY) || "";
  let page;
  try {
    page = await api.get(`/v1/books/${book.id}/entries`, { query: { tokenizer } });
  } catch (error) {
    if (error.field !== "query.tokenizer" && error.field !== "tokenizer") throw error;
    // A tokenizer this server no longer allows: fall back to its default, say why.
    toast(error.message, "error");
    sessionStorage.removeItem(TOKENIZER_KEY);
    tokenizer = "";
    page = await api.get(`/v1/books/${book.id}/entries`);
  }
  const byId = new Map(page.entries.map((e) => [e.id, e]));
  const list = h("ol", { class: "entries", "aria-label": "Entries in book order" });
  const canonSlot = h("div", {}, canonLine(page));
  const indexSlot = h("div", {});
  const status = h("div", { class: "status-lines" }, canonSlot, indexSlot);
  const selected = () => [...list.querySelectorAll("input.select:checked")].map((box) => box.closest("li").dataset.id);

  // --- toolbar: tokenizer, new entry ---------------------------------------------------
  const tokInput = h("input", { id: "tokenizer", list: "tokenizers", value: tokenizer || page.tokenizer, size: 18 });
  const tokError = h("p", { class: "field-error", id: "tokenizer-error", hidden: true });
  const tokForm = h("form", { class: "inline-form" },
    h("label", { for: "tokenizer" }, "Token counts for"), tokInput,
    h("datalist", { id: "tokenizers" }, ["tiktoken:cl100k_base", "cl100k_base", "estimate", "estimate:chars-per-token=4"].map((v) => h("option", { value: v }))),
    h("button", { type: "submit" }, "Count"), tokError);
  tokForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const fresh = await api.get(`/v1/books/${book.id}/entries`, { query: { tokenizer: tokInput.value.trim() } });
      sessionStorage.setItem(TOKENIZER_KEY, tokInput.value.trim());
      for (const entry of fresh.entries) {
        const row = list.querySelector(`li[data-id="${entry.id}"] .tokens`);
        if (row) row.textContent = `${num(entry.tokens)} tok`;
      }
      tokError.hidden = true;
      canonSlot.replaceChildren(canonLine(fresh));
      toast(`Token counts for ${fresh.tokenizer}.`);
    } catch (error) {
      tokError.textContent = error.message;
      tokError.hidden = false;
      tokInput.setAttribute("aria-invalid", "true");
      tokInput.focus();
    }
  });

  // --- rows and their actions ------------------------------------------------------------
  const reload = async (error) => {
    if (error) toast(error.message, "error");
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  };
  const actions = {
    async onToggle(entry, field, value, box) {
      try {
        const saved = await api.patch(`/v1/entries/${entry.id}`, { [field]: value });
        byId.set(saved.id, { ...entry, ...saved });
        toast(`${entry.title}: ${field} ${value ? "on" : "off"}.`);
      } catch (error) {
        box.checked = !value;
        toast(error.message, "error");
      }
    },
    async onMove(row, direction) {
      const move = neighbourMove(row, direction);
      if (!move) return;
      try {
        await sendMove(book, list, row, move.to, move.other);
        row.querySelector(direction === "up" ? ".entry-move button:first-child" : ".entry-move button:last-child").focus();
      } catch (error) {
        reload(error);
      }
    },
  };
  for (const entry of page.entries) list.append(entryRow(book, entry, actions, editable));
  if (editable) enableDragAndDrop(book, list, reload);

  // --- bulk actions ----------------------------------------------------------------------
  const count = h("span", { class: "muted", "aria-live": "polite" }, "0 selected");
  const all = h("input", { type: "checkbox", id: "select-all" });
  const bulkButtons = ["enable", "disable", "delete"].map((action) =>
    h("button", { type: "button", disabled: true, dataset: { action }, class: action === "delete" ? "danger" : "" },
      action[0].toUpperCase() + action.slice(1)));
  const refreshBulk = () => {
    const n = selected().length;
    count.textContent = n > LIMITS.bulk_action_max
      ? `${num(n)} selected: at most ${num(LIMITS.bulk_action_max)} at once`
      : `${num(n)} selected`;
    for (const button of bulkButtons) button.disabled = !editable || n === 0 || n > LIMITS.bulk_action_max;
  };
  list.addEventListener("change", (event) => { if (event.target.matches("input.select")) refreshBulk(); });
  all.addEventListener("change", () => {
    for (const box of list.querySelectorAll("input.select")) box.checked = all.checked;
    refreshBulk();
  });
  for (const button of bulkButtons) {
    button.addEventListener("click", async () => {
      const ids = selected();
      const action = button.dataset.action;
      if (action === "delete" && !window.confirm(`Delete ${ids.length} entries for good?`)) return;
      try {
        const result = await api.post(`/v1/books/${book.id}/entries/bulk`, { action, ids });
        toast(`${action}: ${num(result.changed)} entries.`);
        reload();
      } catch (error) {
        toast(error.message, "error");
      }
    });
  }

  // --- index state, refreshed while entries wait for their vectors -----------------------
  let timer = 0;
  let stopped = false;
  async function pollIndex() {
    if (stopped) return;
    try {
      const state = await api.get(`/v1/books/${book.id}/index`);
      indexSlot.replaceChildren(indexLine(state));
      const waiting = (state.counts.queued || 0) + (state.counts.indexing || 0);
      const shown = list.querySelectorAll('.index-state[data-kind="queued"], .index-state[data-kind="indexing"]').length;
      if (shown && waiting < shown) {
        const fresh = await api.get(`/v1/books/${book.id}/entries`, { query: { tokenizer } });
        for (const entry of fresh.entries) {
          const old = list.querySelector(`li[data-id="${entry.id}"] .index-state`);
          if (old) old.replaceWith(indexBadge(entry));
        }
      }
      if ((waiting || shown) && !stopped) timer = setTimeout(pollIndex, POLL_MS);
    } catch {
      timer = 0; // the next visit to the tab tries again
    }
  }
  await pollIndex();

  add(view, 
    status,
    h("div", { class: "toolbar" }, tokForm,
      editable ? h("a", { class: "button primary", href: `#/book/${book.id}/new-entry` }, "New entry") : null),
    h("div", { class: "bulk", role: "group", "aria-label": "Bulk actions" },
      h("label", { for: "select-all" }, all, " Select all"), count, bulkButtons),
    editable ? h("p", { class: "hint" }, "Drag a row to reorder, or focus it and press Alt+↑ / Alt+↓.") : null,
    page.entries.length ? list : h("p", { class: "empty" }, "No entries yet."));
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
