// Form fields that check their limit as the author types and show the server's error on the
// field it names. An API error's "field" is a path such as "entry.title", "entry.aliases[3]",
// "book.settings.scan_depth" or "query.days"; it is matched to the form's fields by name.

import { h } from "./dom.js";
import { length } from "./limits.js";

let serial = 0;

/**
 * One labelled control. spec: {name, label, kind: "text"|"textarea"|"checkbox"|"select"|
 * "number", value, options: [[value, label]], check(value) -> "" | message, max (counter),
 * hint, rows, placeholder}.
 */
function makeField(spec, onInput) {
  const id = `f${++serial}-${spec.name.replace(/[^a-z0-9]/gi, "-")}`;
  const errorId = `${id}-error`;
  const hintId = spec.hint ? `${id}-hint` : null;
  const describedBy = [hintId, errorId].filter(Boolean).join(" ");
  const common = { id, name: spec.name, "aria-describedby": describedBy };
  let input;
  if (spec.kind === "textarea") {
    input = h("textarea", { ...common, rows: spec.rows || 4, placeholder: spec.placeholder });
    input.value = spec.value ?? "";
  } else if (spec.kind === "checkbox") {
    input = h("input", { ...common, type: "checkbox", checked: Boolean(spec.value) });
  } else if (spec.kind === "select") {
    input = h("select", common, spec.options.map(([value, label]) =>
      h("option", { value, selected: String(spec.value ?? "") === String(value) }, label)));
  } else {
    // Numbers use a text box with a numeric keyboard: <input type=number> silently turns
    // "12abc" into "", which would hide the very mistake the check should report.
    const numeric = spec.kind === "number" ? "numeric" : null;
    input = h("input", {
      ...common,
      type: spec.type || "text",
      inputmode: numeric,
      placeholder: spec.placeholder,
      autocomplete: spec.autocomplete || "off",
    });
    input.value = spec.value ?? "";
  }
  const error = h("p", { id: errorId, class: "field-error", hidden: true });
  const counter = spec.max ? h("span", { class: "counter", "aria-hidden": "true" }) : null;
  const label = h("label", { for: id }, spec.label);
  const el = h("div", { class: `field field-${spec.kind || "text"}`, dataset: { field: spec.name } },
    spec.kind === "checkbox" ? [input, label] : [label, counter, input],
    spec.hint ? h("p", { id: hintId, class: "hint" }, spec.hint) : null,
    error);

  const field = {
    name: spec.name,
    el,
    input,
    read() { return spec.kind === "checkbox" ? input.checked : input.value; },
    show(message, source = "client") {
      error.textContent = message || "";
      error.hidden = !message;
      error.dataset.source = source;
      input.setAttribute("aria-invalid", message ? "true" : "false");
      el.classList.toggle("invalid", Boolean(message));
    },
    check() {
      const message = spec.check ? spec.check(field.read()) : "";
      field.show(message);
      return !message;
    },
    updateCounter() {
      if (!counter) return;
      const n = length(input.value);
      counter.textContent = `${n.toLocaleString("en-US")} / ${spec.max.toLocaleString("en-US")}`;
      counter.classList.toggle("over", n > spec.max);
    },
  };
  const event = spec.kind === "checkbox" || spec.kind === "select" ? "change" : "input";
  input.addEventListener(event, () => {
    field.updateCounter();
    field.check();
    onInput(field);
  });
  field.updateCounter();
  return field;
}

/** Map an API error's field path to one of `names` (longest matching prefix wins). */
export function fieldFor(path, names) {
  if (!path) return null;
  let rest = path.replace(/^(entry|book|body|query)\./, "");
  while (rest) {
    if (names.includes(rest)) return rest;
    const cut = rest.search(/(\[[^\]]*\]|\.[^.[]*)$/);
    if (cut <= 0) break;
    rest = rest.slice(0, cut);
  }
  return null;
}

/** A set of fields with one place for errors no field claims. */
export class Form {
  constructor({ onChange } = {}) {
    this.fields = new Map();
    this.onChange = onChange || (() => {});
    this.general = h("p", { class: "form-error", role: "alert", hidden: true });
  }

  /** Add a field; returns its element. */
  add(spec) {
    const field = makeField(spec, () => {
      this.general.hidden = true;
      this.onChange(this);
    });
    this.fields.set(spec.name, field);
    return field.el;
  }

  get(name) { return this.fields.get(name); }

  value(name) { return this.fields.get(name).read(); }

  /** Check every field; true when all pass. */
  validate() {
    let ok = true;
    for (const field of this.fields.values()) ok = field.check() && ok;
    return ok;
  }

  /** Whether every field passes, without showing messages (for the save button). */
  valid() {
    for (const field of this.fields.values()) {
      if (field.el.classList.contains("invalid")) return false;
    }
    return true;
  }

  /** Show an API error on its field (focused), or above the form. */
  showError(error) {
    const name = fieldFor(error.field, [...this.fields.keys()]);
    if (name) {
      const field = this.fields.get(name);
      field.show(error.message, "server");
      field.input.focus();
    } else {
      this.general.textContent = error.message;
      this.general.hidden = false;
    }
  }

  clearErrors() {
    this.general.hidden = true;
    for (const field of this.fields.values()) field.show("");
  }
}
