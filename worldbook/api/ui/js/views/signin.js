// Sign-in: an API key (from `worldbook keys create`) and the acting user, checked against the
// API before they are kept — in this tab's sessionStorage only.

import { api, session } from "../api.js";
import { add, h } from "../dom.js";
import { Form } from "../fields.js";
import { checkText } from "../limits.js";

export async function renderSignIn(view) {
  const form = new Form();
  const submit = h("button", { type: "submit", class: "primary" }, "Sign in");
  const element = h("form", { class: "card narrow", novalidate: true },
    h("h1", { tabindex: "-1" }, "Sign in"),
    h("p", { class: "muted" },
      "The inspector talks to this server's public API with an API key and names the acting " +
      "user, like any app does. Both stay in this browser tab until you close it."),
    form.add({
      name: "api_key",
      label: "API key",
      type: "password",
      autocomplete: "off",
      hint: "Create one on the server with: worldbook keys create <name>",
      check: (v) => (v.trim() ? "" : "Enter an API key."),
    }),
    form.add({
      name: "X-Worldbook-User",
      label: "Acting user",
      value: session.user,
      autocomplete: "username",
      hint: "Whose books you see and edit (the id your app uses for this person).",
      check: (v) => checkText(v, { max: 255, required: true, label: "Acting user" }),
    }),
    form.general,
    h("div", { class: "actions" }, submit));

  element.addEventListener("submit", async (event) => {
    event.preventDefault();
    form.clearErrors();
    if (!form.validate()) return;
    const credentials = { key: form.value("api_key").trim(), user: form.value("X-Worldbook-User").trim() };
    submit.disabled = true;
    try {
      // One cheap authenticated call proves the key and the user name before they are kept.
      await api.get("/v1/books", { query: { limit: 1 }, credentials });
      session.save(credentials.key, credentials.user);
      const after = sessionStorage.getItem("worldbook.after");
      sessionStorage.removeItem("worldbook.after");
      window.location.hash = after && after !== "#/signin" ? after : "#/books";
    } catch (error) {
      // A key problem is reported with no field (or on the Authorization header): show it
      // on the key; a user-name problem names X-Worldbook-User.
      if (error.status === 401 && error.field !== "X-Worldbook-User") {
        form.get("api_key").show(error.message, "server");
        form.get("api_key").input.focus();
      } else {
        form.showError(error);
      }
    } finally {
      submit.disabled = false;
    }
  });
  add(view, element);
}
