// "Connect an app" (ADR 0017): make a proxy connection and get the three values a chat
// frontend (SillyTavern, JanitorAI, an SDK script) takes — base URL, API key, model name.
// The key (the connection's token) is shown once, right after creation or rotation.

import { api } from "../api.js";
import { h, toast, when } from "../dom.js";

function field(label, input, hint) {
  return h("label", { class: "field" }, h("span", {}, label), input, hint ? h("span", { class: "hint" }, hint) : null);
}

function copyable(label, value) {
  const input = h("input", { type: "text", readonly: true, value, "aria-label": label });
  const copy = h("button", { type: "button" }, "Copy");
  copy.addEventListener("click", async () => {
    await navigator.clipboard.writeText(value);
    toast(`${label} copied.`);
  });
  return h("div", { class: "field" }, h("span", {}, label), h("div", { class: "actions" }, input, copy));
}

/** The three values to paste, with the token that is shown only now. */
export function pasteCard(made) {
  const base = `${window.location.origin}${made.base_url_path}`;
  return h("section", { class: "card", "aria-labelledby": "paste-title" },
    h("h2", { id: "paste-title" }, `Paste these into your app (“${made.name}”)`),
    copyable("Base URL", base),
    copyable("API key", made.token),
    copyable("Model", made.upstream_model || "the model name your provider uses"),
    h("p", { class: "hint", role: "note" }, "The API key is shown only now: only its hash is kept. Lost it? Rotate the connection."));
}

function row(conn, output, reload) {
  const rotate = h("button", { type: "button", disabled: conn.revoked }, "Rotate key");
  const revoke = h("button", { type: "button", class: "danger", disabled: conn.revoked }, "Revoke");
  rotate.addEventListener("click", async () => {
    const made = await api.post(`/v1/connections/${conn.id}/rotate`, {});
    output.replaceChildren(pasteCard(made));
    await reload();
  });
  revoke.addEventListener("click", async () => {
    await api.del(`/v1/connections/${conn.id}`);
    toast(`Revoked “${conn.name}”.`);
    await reload();
  });
  return h("tr", {},
    h("td", {}, conn.name), h("td", {}, `${conn.prefix}…`), h("td", {}, conn.upstream_url),
    h("td", {}, conn.revoked ? "revoked" : "active"), h("td", {}, when(conn.created_at)),
    h("td", {}, rotate, " ", revoke));
}

export async function renderConnect(view) {
  const { books } = await api.get("/v1/books", { query: { limit: 200 } });
  const output = h("div", { "aria-live": "polite" });
  const list = h("tbody", {});
  const name = h("input", { type: "text", required: true, maxlength: 200, value: "My chat app" });
  const kind = h("select", {}, h("option", { value: "openai" }, "OpenAI-compatible"), h("option", { value: "anthropic" }, "Anthropic"));
  const url = h("input", { type: "url", required: true, placeholder: "your provider’s base URL, ending in /v1" });
  const key = h("input", { type: "password", autocomplete: "off" });
  const model = h("input", { type: "text", maxlength: 255 });
  const window_ = h("input", { type: "number", min: 512, value: 8192 });
  const charName = h("input", { type: "text", maxlength: 255 });
  const userName = h("input", { type: "text", maxlength: 255 });
  const picks = books.map((b) => h("label", { class: "check" }, h("input", { type: "checkbox", value: b.id }), ` ${b.title}`));
  const error = h("p", { class: "form-error", role: "alert" });
  const form = h("form", { class: "card", "aria-labelledby": "connect-title" },
    h("h2", { id: "connect-title" }, "New connection"),
    field("Name", name), field("Provider protocol", kind),
    field("Provider base URL", url, "Where your model is served, ending in /v1."),
    field("Provider API key", key, "Stored encrypted; never shown again."),
    field("Model (optional)", model, "Fix the model here, or let your app name it."),
    h("fieldset", {}, h("legend", {}, "Books"), picks.length ? picks : h("p", {}, "No books yet.")),
    field("Character name ({{char}})", charName), field("Your name ({{user}})", userName),
    field("Model input window (tokens)", window_),
    error, h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create connection")));

  async function reload() {
    const conns = await api.get("/v1/connections");
    list.replaceChildren(...conns.map((c) => row(c, output, reload)));
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const chosen = picks.map((p) => p.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    const body = {
      name: name.value, upstream_kind: kind.value, upstream_url: url.value, book_ids: chosen,
      input_window: Number(window_.value) || 8192,
    };
    if (key.value) body.upstream_key = key.value;
    if (model.value) body.upstream_model = model.value;
    if (charName.value) body.char_name = charName.value;
    if (userName.value) body.user_name = userName.value;
    try {
      const made = await api.post("/v1/connections", body);
      key.value = "";
      output.replaceChildren(pasteCard(made));
      await reload();
    } catch (e) {
      error.textContent = e.message;
    }
  });
  await reload();
  view.append(
    h("h1", { tabindex: "-1" }, "Connect an app"),
    h("p", {}, "Point SillyTavern, JanitorAI or any OpenAI / Anthropic SDK script at worldbook: it adds your books' lore to every turn and passes the rest to your model."),
    output, form,
    h("section", { class: "card" }, h("h2", {}, "Your connections"),
      h("table", {}, h("thead", {}, h("tr", {}, ["Name", "Key", "Provider", "State", "Created", ""].map((t) => h("th", {}, t)))), list)));
}
