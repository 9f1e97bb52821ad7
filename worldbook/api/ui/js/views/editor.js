// The entry editor: every field of an entry (classic fields only in books that use them),
// each checked against its DESIGN §6 limit as the author types; on save only the changed
// fields are sent, and a server error appears on the field it names.

import { api, session } from "../api.js";
import { hasClassicFields } from "../capabilities.js";
import { add, h, num, toast, when } from "../dom.js";
import { Form } from "../fields.js";
import { LIMITS, checkInt, checkList, checkText, lines } from "../limits.js";
import { indexBadge } from "./entry_rows.js";

const BLANK = {
  title: "", lore: "", aliases: [], canon: false, enabled: true, comment: "", keys: [],
  secondary_keys: [], selective: false, selective_logic: 0, constant: false, order: 100,
  priority: 0, role: "system", whole_words: null, case_sensitive: null, probability: 100,
  scan_depth: null, decorators: [], extensions: {},
};

const LOGIC = [[0, "AND ANY: a primary and any secondary key"], [1, "NOT ALL: not all secondary keys"],
  [2, "NOT ANY: no secondary key"], [3, "AND ALL: a primary and every secondary key"]];
const TRI = [["", "book default"], ["true", "yes"], ["false", "no"]];
// Read when a form is built: LIMITS is filled from the server before any view renders.
const int32 = () => ({ min: -LIMITS.int32_max, max: LIMITS.int32_max });

// How each field travels between its control and the API's JSON.
const LIST_FIELDS = ["aliases", "keys", "secondary_keys", "decorators"];
const INT_FIELDS = ["order", "priority", "probability", "selective_logic"];
const TRI_FIELDS = ["whole_words", "case_sensitive"];

function toControl(name, value) {
  if (LIST_FIELDS.includes(name)) return value.join("\n");
  if (TRI_FIELDS.includes(name)) return value === null ? "" : String(value);
  if (name === "scan_depth") return value === null ? "" : String(value);
  if (name === "extensions") return JSON.stringify(value, null, 2);
  return value;
}

function fromControl(name, raw) {
  if (LIST_FIELDS.includes(name)) return lines(raw);
  if (INT_FIELDS.includes(name)) return Number(raw);
  if (TRI_FIELDS.includes(name)) return raw === "" ? null : raw === "true";
  if (name === "scan_depth") return raw.trim() === "" ? null : Number(raw);
  if (name === "extensions") return JSON.parse(raw || "{}");
  return raw;
}

function checkJsonObject(raw) {
  try {
    const value = JSON.parse(raw || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? "" : "Extensions must be a JSON object.";
  } catch (error) {
    return `Extensions is not valid JSON: ${error.message}`;
  }
}

function commonFields(form, entry, mode) {
  // Classic books hold short keyword snippets: the server accepts 1 character of lore there.
  const loreMin = mode === "classic" ? LIMITS.classic_lore_min : LIMITS.lore_min;
  return [
    form.add({ name: "title", label: "Title", value: entry.title, max: LIMITS.entry_title_max,
      hint: "A short noun phrase; also matched literally in messages.",
      check: (v) => checkText(v, { min: LIMITS.entry_title_min, max: LIMITS.entry_title_max, required: true, label: "Title" }) }),
    form.add({ name: "lore", label: "Lore", kind: "textarea", rows: 10, value: entry.lore, max: LIMITS.lore_max,
      check: (v) => checkText(v, { min: loreMin, max: LIMITS.lore_max, required: true, label: "Lore" }) }),
    form.add({ name: "aliases", label: "Aliases (one per line)", kind: "textarea", rows: 3,
      value: toControl("aliases", entry.aliases),
      hint: `Other names for it, matched like the title (at most ${LIMITS.aliases_max}, each ≤ ${LIMITS.alias_max} characters).`,
      check: (v) => checkList(lines(v), { maxItems: LIMITS.aliases_max, maxLength: LIMITS.alias_max, label: "Aliases" }) }),
    h("div", { class: "row" },
      form.add({ name: "canon", label: "Canon (always in context)", kind: "checkbox", value: entry.canon }),
      form.add({ name: "enabled", label: "Enabled", kind: "checkbox", value: entry.enabled })),
    form.add({ name: "comment", label: "Comment (never sent to the model)", kind: "textarea", rows: 2,
      value: entry.comment, check: (v) => checkText(v, { max: LIMITS.lore_max, label: "Comment" }) }),
  ];
}

function classicFields(form, entry) {
  const int = (name, label, range, optional = false) => form.add({
    name, label, kind: "number", value: toControl(name, entry[name]),
    check: (v) => checkInt(v, { ...range, label, optional }) });
  return h("fieldset", { class: "classic" },
    h("legend", {}, "Classic (keyword) fields"),
    form.add({ name: "keys", label: "Keys (one per line; /regex/flags allowed)", kind: "textarea", rows: 3, value: toControl("keys", entry.keys) }),
    form.add({ name: "secondary_keys", label: "Secondary keys (one per line)", kind: "textarea", rows: 2, value: toControl("secondary_keys", entry.secondary_keys) }),
    h("div", { class: "row" },
      form.add({ name: "selective", label: "Selective (needs a secondary key)", kind: "checkbox", value: entry.selective }),
      form.add({ name: "constant", label: "Constant (always, no key needed)", kind: "checkbox", value: entry.constant })),
    form.add({ name: "selective_logic", label: "Selective logic", kind: "select", value: entry.selective_logic, options: LOGIC }),
    h("div", { class: "row" },
      int("order", "Order (higher goes earlier)", int32()),
      int("priority", "Priority (higher survives the budget)", int32()),
      int("probability", "Probability %", { min: 0, max: LIMITS.probability_max })),
    h("div", { class: "row" },
      form.add({ name: "role", label: "Role", kind: "select", value: entry.role, options: ["system", "user", "assistant"].map((r) => [r, r]) }),
      form.add({ name: "whole_words", label: "Whole words", kind: "select", value: toControl("whole_words", entry.whole_words), options: TRI }),
      form.add({ name: "case_sensitive", label: "Case-sensitive", kind: "select", value: toControl("case_sensitive", entry.case_sensitive), options: TRI }),
      int("scan_depth", "Scan depth (blank: book's)", { min: 0, max: LIMITS.scan_depth_max }, true)),
    form.add({ name: "decorators", label: "Decorators (one per line, e.g. @@depth 4)", kind: "textarea", rows: 2, value: toControl("decorators", entry.decorators) }));
}

export async function renderEditor(view, { book, itemId }) {
  const creating = !itemId;
  const entry = creating ? { ...BLANK } : await api.get(`/v1/entries/${itemId}`);
  const classic = hasClassicFields(book.mode);
  const editable = !book.trashed && book.owner_id === session.user;
  const save = h("button", { type: "submit", class: "primary", disabled: !editable }, creating ? "Create entry" : "Save");
  const form = new Form({ onChange: (f) => { save.disabled = !editable || !f.valid(); } });
  const element = h("form", { class: "card editor", novalidate: true, "aria-label": "Entry" },
    h("h2", {}, creating ? "New entry" : entry.title),
    creating ? null : h("p", { class: "meta" }, indexBadge(entry), ` · position ${num(entry.position)} · changed ${when(entry.updated_at)}`,
      entry.index_error ? ` · ${entry.index_error}` : ""),
    commonFields(form, entry, book.mode),
    classic ? classicFields(form, entry) : null,
    h("details", { class: "advanced" }, h("summary", {}, "Extensions (JSON kept verbatim)"),
      form.add({ name: "extensions", label: "Extensions", kind: "textarea", rows: 4, value: toControl("extensions", entry.extensions), check: checkJsonObject })),
    form.general,
    h("div", { class: "actions" }, save,
      h("a", { class: "button", href: `#/book/${book.id}/entries` }, "Back to the list"),
      creating || !editable ? null : h("button", { type: "button", class: "danger", onClick: remove }, "Delete entry")));
  if (!editable) for (const control of element.querySelectorAll("input, textarea, select")) control.disabled = true;

  async function remove() {
    if (!window.confirm(`Delete “${entry.title}” for good?`)) return;
    try {
      await api.del(`/v1/entries/${entry.id}`);
      toast(`Deleted “${entry.title}”.`);
      window.location.hash = `#/book/${book.id}/entries`;
    } catch (error) {
      form.showError(error);
    }
  }

  function changes() {
    const out = {};
    for (const [name, field] of form.fields) {
      const value = fromControl(name, field.read());
      if (creating || JSON.stringify(value) !== JSON.stringify(entry[name])) out[name] = value;
    }
    return out;
  }

  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.validate()) {
      const bad = element.querySelector('[aria-invalid="true"]');
      if (bad) bad.focus();
      return;
    }
    const body = changes();
    if (!Object.keys(body).length) {
      toast("Nothing changed.");
      return;
    }
    save.disabled = true;
    try {
      const saved = creating
        ? await api.post(`/v1/books/${book.id}/entries`, body)
        : await api.patch(`/v1/entries/${entry.id}`, body);
      toast(creating ? `Created “${saved.title}”.` : `Saved “${saved.title}”.`);
      window.location.hash = `#/book/${book.id}/entry/${saved.id}`;
      if (!creating) window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) {
      form.showError(error);
    } finally {
      save.disabled = !editable || !form.valid();
    }
  });
  add(view, element);
}
