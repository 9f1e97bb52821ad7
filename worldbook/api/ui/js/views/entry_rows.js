// The rows of the entry list and their reordering: drag and drop with the mouse, or the
// move buttons / Alt+Arrow keys from the keyboard. Each move is one
// POST /v1/books/{id}/entries/move (the book keeps sparse positions, so one write per move).

import { api } from "../api.js";
import { badge, h, num, toast } from "../dom.js";

const INDEX_HINT = {
  queued: "waiting to be embedded",
  indexing: "being embedded now",
  indexed: "has a current vector: found by meaning",
  failed: "indexing failed",
};

export function indexBadge(entry) {
  const el = badge(entry.index_status);
  el.title = entry.index_error || INDEX_HINT[entry.index_status] || "";
  el.classList.add("index-state");
  return el;
}

/** One row. `actions`: {onToggle(entry, field, value), onMove(row, where)}. */
export function entryRow(book, entry, actions, editable) {
  const select = h("input", { type: "checkbox", class: "select", "aria-label": `Select ${entry.title}` });
  const toggle = (field, label) => {
    const box = h("input", { type: "checkbox", checked: entry[field], disabled: !editable,
      "aria-label": `${label}: ${entry.title}` });
    box.addEventListener("change", () => actions.onToggle(entry, field, box.checked, box));
    return h("label", { class: `toggle toggle-${field}` }, box, h("span", {}, label));
  };
  const up = h("button", { type: "button", class: "icon", "aria-label": `Move ${entry.title} up`, title: "Move up (Alt+↑)", disabled: !editable }, "↑");
  const down = h("button", { type: "button", class: "icon", "aria-label": `Move ${entry.title} down`, title: "Move down (Alt+↓)", disabled: !editable }, "↓");
  const row = h("li", { class: "entry", draggable: editable ? "true" : "false", dataset: { id: entry.id } },
    h("span", { class: "handle", "aria-hidden": "true", title: "Drag to reorder" }, "⠿"),
    select,
    h("div", { class: "entry-main" },
      h("a", { href: `#/book/${book.id}/entry/${entry.id}`, class: "entry-title" }, entry.title),
      entry.aliases.length ? h("span", { class: "aliases muted" }, entry.aliases.slice(0, 4).join(", "),
        entry.aliases.length > 4 ? ` +${entry.aliases.length - 4}` : "") : null),
    h("div", { class: "entry-facts" },
      indexBadge(entry),
      entry.enabled ? null : badge("disabled", "warn"),
      h("span", { class: "tokens", title: "Tokens of the lore, for the chosen tokenizer" }, `${num(entry.tokens)} tok`),
      entry.usage ? h("span", { class: "uses muted", title: "Turns that used it" }, `${num(entry.usage.total)} uses`) : null),
    h("div", { class: "entry-toggles" }, toggle("canon", "Canon"), toggle("enabled", "Enabled")),
    h("div", { class: "entry-move" }, up, down));
  up.addEventListener("click", () => actions.onMove(row, "up"));
  down.addEventListener("click", () => actions.onMove(row, "down"));
  row.addEventListener("keydown", (event) => {
    if (!editable || !event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
    event.preventDefault();
    actions.onMove(row, event.key === "ArrowUp" ? "up" : "down");
  });
  return row;
}

/** Where a keyboard move goes: before the previous row or after the next one. */
export function neighbourMove(row, direction) {
  const other = direction === "up" ? row.previousElementSibling : row.nextElementSibling;
  if (!other) return null;
  return { to: direction === "up" ? "before" : "after", anchor: other.dataset.id, other };
}

/** Send one move and apply it to the list; on failure the caller reloads the list. */
export async function sendMove(book, list, row, to, anchorRow) {
  await api.post(`/v1/books/${book.id}/entries/move`, { ids: [row.dataset.id], to, anchor: anchorRow.dataset.id });
  if (to === "before") list.insertBefore(row, anchorRow);
  else list.insertBefore(row, anchorRow.nextElementSibling);
}

/** Wire HTML5 drag and drop on the list: drop a row before or after another row. */
export function enableDragAndDrop(book, list, onError) {
  let dragged = null;
  const clearMarks = () => {
    for (const el of list.querySelectorAll(".drop-before, .drop-after")) el.classList.remove("drop-before", "drop-after");
  };
  const placement = (row, event) => {
    const box = row.getBoundingClientRect();
    return event.clientY < box.top + box.height / 2 ? "before" : "after";
  };
  list.addEventListener("dragstart", (event) => {
    dragged = event.target.closest("li.entry");
    if (!dragged) return;
    dragged.classList.add("dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", dragged.dataset.id);
  });
  list.addEventListener("dragend", () => {
    if (dragged) dragged.classList.remove("dragging");
    dragged = null;
    clearMarks();
  });
  list.addEventListener("dragover", (event) => {
    const row = event.target.closest("li.entry");
    if (!dragged || !row || row === dragged) return;
    event.preventDefault(); // allow the drop
    clearMarks();
    row.classList.add(placement(row, event) === "before" ? "drop-before" : "drop-after");
  });
  list.addEventListener("drop", async (event) => {
    const row = event.target.closest("li.entry");
    if (!dragged || !row || row === dragged) return;
    event.preventDefault();
    const to = placement(row, event);
    const moving = dragged;
    clearMarks();
    // A drop that leaves the row where it is writes nothing.
    const unchanged = (to === "before" && row.previousElementSibling === moving)
      || (to === "after" && row.nextElementSibling === moving);
    if (unchanged) return;
    try {
      await sendMove(book, list, moving, to, row);
      toast(`Moved “${moving.querySelector(".entry-title").textContent}”.`);
    } catch (error) {
      onError(error);
    }
  });
}
