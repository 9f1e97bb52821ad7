// The inspector's shell: a hash router (#/books, #/book/<id>/entries, …) that renders one
// view at a time into <main>. Hash routes keep every screen a plain static file on the
// server (no server-side routing) and make every screen linkable and back-button friendly.

import { session } from "./api.js";
import { fill, h, toast } from "./dom.js";
import { loadLimits } from "./limits.js";
import { renderSignIn } from "./views/signin.js";
import { renderBooks, renderLibrary, renderTrash } from "./views/books.js";
import { renderImport } from "./views/import.js";
import { renderBook } from "./views/book.js";
import { renderConnect } from "./views/connect.js";

const ROUTES = [
  [/^#\/signin$/, renderSignIn, { open: true }],
  [/^#\/books$/, renderBooks],
  [/^#\/library$/, renderLibrary],
  [/^#\/trash$/, renderTrash],
  [/^#\/import$/, renderImport],
  [/^#\/connect$/, renderConnect],
  [/^#\/book\/([A-Za-z0-9_-]+)\/([a-z-]+)(?:\/([A-Za-z0-9_-]+))?$/, renderBook],
];

let cleanup = null;
let generation = 0;

function shell() {
  const signedIn = session.signedIn;
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("who").hidden = !signedIn;
  fill(document.getElementById("who-name"), signedIn ? `Acting as ${session.user}` : "");
  const section = (window.location.hash.match(/^#\/([a-z]+)/) || [])[1];
  for (const link of document.querySelectorAll("#nav a")) {
    const current = link.dataset.nav === section || (section === "book" && link.dataset.nav === "books");
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function route() {
  const hash = window.location.hash || "#/books";
  const found = ROUTES.find(([pattern]) => pattern.test(hash));
  if (!found) {
    window.location.hash = "#/books";
    return;
  }
  const [pattern, render, options = {}] = found;
  if (!options.open && !session.signedIn) {
    sessionStorage.setItem("worldbook.after", hash);
    window.location.hash = "#/signin";
    return;
  }
  if (cleanup) cleanup();
  cleanup = null;
  shell();
  const mine = ++generation;
  const main = document.getElementById("view");
  fill(main, h("p", { class: "loading" }, "Loading…"));
  try {
    await loadLimits(); // every form checks against the server's limits
    const view = h("div", { class: "view" });
    const done = await render(view, hash.match(pattern).slice(1));
    if (mine !== generation) {
      // The author navigated away while this view was loading: drop it.
      if (typeof done === "function") done();
      return;
    }
    cleanup = typeof done === "function" ? done : null;
    fill(main, view);
    const heading = main.querySelector("h1");
    if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true });
  } catch (error) {
    if (mine !== generation) return;
    if (error.status === 401) {
      session.clear();
      toast(error.message, "error");
      window.location.hash = "#/signin";
      return;
    }
    fill(main, h("div", { class: "view" },
      h("h1", { tabindex: "-1" }, "Something went wrong"),
      h("p", { class: "form-error", role: "alert" }, error.message),
      h("p", {}, h("a", { href: "#/books" }, "Back to my books"))));
  }
}

document.getElementById("sign-out").addEventListener("click", () => {
  session.clear();
  window.location.hash = "#/signin";
  toast("Signed out; the key is forgotten by this tab.");
});

// A file dropped outside the import zone would make the browser open it and leave the page.
for (const type of ["dragover", "drop"]) {
  window.addEventListener(type, (event) => {
    if (event.dataTransfer && [...event.dataTransfer.types].includes("Files")) event.preventDefault();
  });
}

window.addEventListener("hashchange", route);
route();
