// Preview: a sample message or a short chat against this book (and optionally others), for a
// chosen model profile. POST /v1/preview runs the same selection as a real turn and is not
// counted as usage (DESIGN §2 rule 8).

import { api } from "../api.js";
import { add, h, num } from "../dom.js";
import { Form } from "../fields.js";
import { LIMITS, checkInt, length } from "../limits.js";
import { renderSelection } from "./trace.js";

const MODELS = ["gpt-4o", "gpt-4", "claude-3-5-sonnet", "llama-3.1-8b-instruct", "mistral-7b-instruct", "gemma-2-9b-it"];
const SPEAKER = /^(user|assistant|system)(?:\s*\(([^)]+)\))?\s*:\s?(.*)$/i;
const STATE_KEY = "worldbook.preview";

/** Parse "user: …" / "assistant (Name): …" lines; other lines continue the message above. */
export function parseChat(text) {
  const messages = [];
  text.split("\n").forEach((line, i) => {
    const match = SPEAKER.exec(line);
    if (match) {
      const message = { role: match[1].toLowerCase(), content: match[3] };
      if (match[2]) message.name = match[2].trim();
      messages.push(message);
    } else if (messages.length) {
      messages[messages.length - 1].content += "\n" + line;
    } else if (line.trim()) {
      throw new Error(`Line ${i + 1}: start the chat with “user:”, “assistant:” or “system:”.`);
    }
  });
  return messages.map((m) => ({ ...m, content: m.content.trim() }));
}

function chatLength(text) {
  try {
    return parseChat(text).reduce((n, m) => n + length(m.content), 0);
  } catch {
    return length(text);
  }
}

function checkSample(kind) {
  return (value) => {
    const n = kind === "chat" ? chatLength(value) : length(value);
    if (!value.trim()) return "Type a message to preview.";
    if (n > LIMITS.preview_message_max) return `A preview takes at most ${num(LIMITS.preview_message_max)} characters (${num(n)} now).`;
    if (kind === "chat") {
      try {
        if (!parseChat(value).some((m) => m.role === "user")) return "The chat needs at least one user message.";
      } catch (error) {
        return error.message;
      }
    }
    return "";
  };
}

export async function renderPreview(view, { book }) {
  const saved = JSON.parse(sessionStorage.getItem(STATE_KEY) || "{}");
  const { books } = await api.get("/v1/books", { query: { limit: 200 } });
  const others = books.filter((b) => b.id !== book.id);
  const run = h("button", { type: "submit", class: "primary" }, "Preview");
  const form = new Form({ onChange: (f) => { run.disabled = !f.valid(); } });
  const output = h("div", { class: "preview-output", "aria-live": "polite" });
  const kind = h("select", { id: "sample-kind", "aria-label": "Sample kind" },
    h("option", { value: "message" }, "One message"), h("option", { value: "chat" }, "A short chat"));
  kind.value = saved.kind || "message";
  const message = form.add({ name: "message", label: "Message", kind: "textarea", rows: 3, max: LIMITS.preview_message_max,
    value: saved.message || "", check: checkSample("message"),
    placeholder: "What would the model see for this message?" });
  const chat = form.add({ name: "messages", label: "Chat (one “role: text” per line)", kind: "textarea", rows: 6,
    value: saved.messages || "", check: checkSample("chat"),
    hint: "user: …, assistant: … or assistant (Name): … — a line without a role continues the message above.",
    placeholder: "user: Where does the road lead?\nassistant (Seraphina): North, to the glade." });
  const sync = () => {
    message.hidden = kind.value !== "message";
    chat.hidden = kind.value !== "chat";
    form.get("message").show("");
    form.get("messages").show("");
    run.disabled = false;
  };
  kind.addEventListener("change", sync);
  sync();
  const element = h("form", { class: "card", novalidate: true, "aria-label": "Preview" },
    h("div", { class: "field" }, h("label", { for: "sample-kind" }, "Sample"), kind),
    message, chat,
    h("fieldset", { class: "profile" }, h("legend", {}, "Model profile"),
      h("div", { class: "row" },
        form.add({ name: "model", label: "Model", value: saved.model || "", placeholder: "e.g. gpt-4o", hint: "A known name fills the rest." }),
        form.add({ name: "input_window", label: "Input window (tokens)", kind: "number", value: saved.input_window || "",
          placeholder: "server default", check: (v) => checkInt(v, { min: 1, max: 100_000_000, label: "Input window", optional: true }) }),
        form.add({ name: "tokenizer", label: "Tokenizer", value: saved.tokenizer || "", placeholder: "server default" }),
        form.add({ name: "supports_tools", label: "Tools", kind: "select", value: saved.supports_tools || "",
          options: [["", "model default"], ["true", "supports tools"], ["false", "no tools"]] }))),
    others.length ? h("fieldset", { class: "books-choice" }, h("legend", {}, "Also attach"),
      others.map((b) => h("label", {}, h("input", { type: "checkbox", name: "book", value: b.id }), ` ${b.title}`))) : null,
    form.general,
    h("div", { class: "actions" }, run));
  element.append(h("datalist", { id: "models" }, MODELS.map((m) => h("option", { value: m }))));
  form.get("model").input.setAttribute("list", "models");

  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    const which = kind.value === "chat" ? form.get("messages") : form.get("message");
    const ok = which.check() && form.get("input_window").check();
    if (!ok) return;
    const state = {
      kind: kind.value, message: form.value("message"), messages: form.value("messages"),
      model: form.value("model").trim(), input_window: form.value("input_window").trim(),
      tokenizer: form.value("tokenizer").trim(), supports_tools: form.value("supports_tools"),
    };
    sessionStorage.setItem(STATE_KEY, JSON.stringify(state));
    const extra = [...element.querySelectorAll('input[name="book"]:checked')].map((box) => box.value);
    const body = { book_ids: [book.id, ...extra], trace: "full" };
    if (state.kind === "chat") body.messages = parseChat(state.messages);
    else body.message = state.message;
    if (state.model) body.model = state.model;
    if (state.input_window) body.input_window = Number(state.input_window);
    if (state.tokenizer) body.tokenizer = state.tokenizer;
    if (state.supports_tools) body.supports_tools = state.supports_tools === "true";
    run.disabled = true;
    output.replaceChildren(h("p", { class: "loading" }, "Selecting…"));
    try {
      const selection = await api.post("/v1/preview", body);
      output.replaceChildren(renderSelection(selection));
    } catch (error) {
      output.replaceChildren();
      form.showError(error);
    } finally {
      run.disabled = false;
    }
  });
  add(view, element, output);
}
