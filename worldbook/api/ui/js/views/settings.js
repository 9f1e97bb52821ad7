// Book settings: title, description, tags, visibility, mode (the modes this API accepts), the
// living world (when the API has it), the classic book settings; export; trash and restore.

import { api, session } from "../api.js";
import { hasClassicFields, livingWorldOn } from "../capabilities.js";
import { add, download, h, toast } from "../dom.js";
import { Form } from "../fields.js";
import { LIMITS, checkInt, checkList, checkText, commaList } from "../limits.js";

const CLASSIC_SETTINGS = ["settings.scan_depth", "settings.token_budget", "settings.recursive"];

function exportButtons(book) {
  const formats = [["sillytavern", "SillyTavern World Info"], ["ccv3", "Character Card V3 lorebook"]];
  return h("section", { class: "card", "aria-labelledby": "export-h" },
    h("h2", { id: "export-h" }, "Export"),
    h("p", { class: "muted" }, "A file in the format's own field names; importing it back gives the same arrangement."),
    h("div", { class: "actions" }, formats.map(([format, label]) => h("button", {
      type: "button", dataset: { format },
      onClick: async () => {
        try {
          const { blob, filename } = await api.file(`/v1/books/${book.id}/export`, { format });
          download(blob, filename);
          toast(`Exported ${label}.`);
        } catch (error) {
          toast(error.message, "error");
        }
      },
    }, `Export ${label}`))));
}

function trashSection(book) {
  const action = book.trashed ? "restore" : "trash";
  return h("section", { class: "card", "aria-labelledby": "trash-h" },
    h("h2", { id: "trash-h" }, book.trashed ? "In the trash" : "Trash"),
    h("p", { class: "muted" }, book.trashed
      ? "No turn uses this book until it is restored."
      : "A trashed book is kept and can be restored from the Trash."),
    h("button", {
      type: "button", class: book.trashed ? "primary" : "danger",
      onClick: async () => {
        try {
          if (action === "trash") await api.del(`/v1/books/${book.id}`);
          else await api.post(`/v1/books/${book.id}/restore`);
          toast(action === "trash" ? `Moved “${book.title}” to the trash.` : `Restored “${book.title}”.`);
          window.location.hash = action === "trash" ? "#/trash" : `#/book/${book.id}/entries`;
        } catch (error) {
          toast(error.message, "error");
        }
      },
    }, book.trashed ? "Restore" : "Move to the trash"));
}

function settingsFields(form, book, caps) {
  const s = book.settings || {};
  return [
    form.add({ name: "title", label: "Title", value: book.title, max: LIMITS.book_title_max,
      check: (v) => checkText(v, { max: LIMITS.book_title_max, required: true, label: "Title" }) }),
    form.add({ name: "description", label: "Description", kind: "textarea", rows: 3, value: book.description,
      max: LIMITS.book_description_max, check: (v) => checkText(v, { max: LIMITS.book_description_max, label: "Description" }) }),
    form.add({ name: "tags", label: "Tags (comma-separated)", value: book.tags.join(", "),
      check: (v) => checkList(commaList(v), { maxItems: LIMITS.tags_max, maxLength: LIMITS.tag_max, label: "Tags" }) }),
    h("div", { class: "row" },
      form.add({ name: "visibility", label: "Visibility", kind: "select", value: book.visibility,
        options: caps.visibilities.map((v) => [v, v]), hint: "Public needs at least 10 entries." }),
      form.add({ name: "mode", label: "Mode", kind: "select", value: book.mode,
        options: caps.modes.map((m) => [m, m]), hint: "world: by meaning · classic: by keywords" + (caps.modes.includes("hybrid") ? " · hybrid: both" : "") })),
    caps.livingWorld ? form.add({ name: caps.livingWorld === "field" ? "living_world" : "settings.living_world",
      label: "Living world (the model may write lore during play)", kind: "checkbox", value: livingWorldOn(book, caps.livingWorld) }) : null,
    h("fieldset", { class: "classic", id: "classic-settings", hidden: !hasClassicFields(book.mode) },
      h("legend", {}, "Classic book settings"),
      h("div", { class: "row" },
        form.add({ name: "settings.scan_depth", label: "Scan depth (messages)", kind: "number", value: s.scan_depth ?? "",
          check: (v) => checkInt(v, { min: 0, max: LIMITS.scan_depth_max, label: "Scan depth", optional: true }) }),
        form.add({ name: "settings.token_budget", label: "Token budget", kind: "number", value: s.token_budget ?? "",
          check: (v) => checkInt(v, { min: LIMITS.token_budget_min, max: LIMITS.token_budget_max, label: "Token budget", optional: true }) }),
        form.add({ name: "settings.recursive", label: "Recursive scanning", kind: "checkbox", value: Boolean(s.recursive) }))),
  ];
}

/** The PATCH body: changed top-level fields, and a whole new settings object if any changed. */
function changes(form, book) {
  const body = {};
  const title = form.value("title");
  if (title !== book.title) body.title = title;
  if (form.value("description") !== book.description) body.description = form.value("description");
  const tags = commaList(form.value("tags"));
  if (JSON.stringify(tags) !== JSON.stringify(book.tags)) body.tags = tags;
  for (const name of ["visibility", "mode"]) if (form.value(name) !== book[name]) body[name] = form.value(name);
  if (form.get("living_world") && form.value("living_world") !== Boolean(book.living_world)) {
    body.living_world = form.value("living_world");
  }
  const settings = { ...(book.settings || {}) };
  const names = [...CLASSIC_SETTINGS, ...(form.get("settings.living_world") ? ["settings.living_world"] : [])];
  for (const name of names) {
    const key = name.slice("settings.".length);
    const raw = form.value(name);
    if (typeof raw === "boolean") settings[key] = raw;
    else if (raw.trim() === "") delete settings[key];
    else settings[key] = Number(raw);
  }
  // A settings key left off and still off is not a change.
  for (const key of ["recursive", "living_world"]) if (settings[key] === false && !(key in (book.settings || {}))) delete settings[key];
  if (JSON.stringify(settings) !== JSON.stringify(book.settings || {})) body.settings = settings;
  return body;
}

export async function renderSettings(view, { book, caps }) {
  const editable = !book.trashed && book.owner_id === session.user;
  const save = h("button", { type: "submit", class: "primary", disabled: !editable }, "Save settings");
  const form = new Form({ onChange: (f) => { save.disabled = !editable || !f.valid(); } });
  const element = h("form", { class: "card", novalidate: true, "aria-labelledby": "settings-h" },
    h("h2", { id: "settings-h" }, "Book settings"), settingsFields(form, book, caps), form.general,
    h("div", { class: "actions" }, save));
  form.get("mode").input.addEventListener("change", () => {
    element.querySelector("#classic-settings").hidden = !hasClassicFields(form.value("mode"));
  });
  if (!editable) for (const control of element.querySelectorAll("input, textarea, select")) control.disabled = true;
  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!form.validate()) return;
    const body = changes(form, book);
    if (!Object.keys(body).length) {
      toast("Nothing changed.");
      return;
    }
    try {
      await api.patch(`/v1/books/${book.id}`, body);
      toast("Settings saved.");
      window.dispatchEvent(new HashChangeEvent("hashchange"));
    } catch (error) {
      form.showError(error);
    }
  });
  add(view, element, exportButtons(book), book.owner_id === session.user ? trashSection(book) : null);
}
