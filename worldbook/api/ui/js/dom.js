// Tiny DOM helpers. Every piece of data from the API reaches the page as text nodes or
// attribute values, never as HTML: lore is user-written and may contain markup.

const PROPERTIES = new Set(["value", "checked", "selected", "indeterminate", "disabled", "hidden"]);

/** Create an element: h("button", {class: "x", onClick: fn}, "label", child, [more]). */
export function h(tag, props = {}, ...children) {
  const el = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.setAttribute("class", value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (PROPERTIES.has(key)) {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Append children to an existing element, skipping null/false (as h() does). */
export function add(el, ...children) {
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A number with thousands separators (the server's messages use the same style). */
export function num(value) {
  return value === null || value === undefined ? "—" : Number(value).toLocaleString("en-US");
}

/** A short local date-time for an ISO timestamp. */
export function when(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

let toastTimer = 0;

/** A short status message in the page's live region (read out by screen readers). */
export function toast(message, kind = "info") {
  const region = document.getElementById("toast");
  fill(region, message);
  region.dataset.kind = kind;
  region.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { region.hidden = true; }, kind === "error" ? 8000 : 3500);
}

/**
 * A table. rows: [{cells: [...], data: {...}, classes: [...]}]; each cell is content, or
 * {content, class}. Every cell carries its column's name (data-label), so narrow screens show
 * each row as a stacked card (see app.css) instead of squeezing the columns.
 */
export function dataTable(caption, head, rows, empty) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  const cell = (value, i) => {
    const spec = value && typeof value === "object" && "content" in value ? value : { content: value };
    return h("td", { class: spec.class, "data-label": head[i] }, spec.content);
  };
  return h("div", { class: "table-wrap" }, h("table", { class: "stack" },
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, rows.map((r) => h("tr", { dataset: r.data || {} }, r.cells.map(cell))))));
}

/** A labelled badge, e.g. an index state or a selection path. */
export function badge(text, kind = text) {
  return h("span", { class: "badge", dataset: { kind } }, text);
}

/** Save bytes the API returned as a file download, without leaving the page. */
export function download(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
