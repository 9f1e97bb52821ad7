// Usage of a book (owner only): turns served, turns per day, use counts per entry (most used
// first), entries never used, and the heavy-canon alert. Previews are never counted.

import { api } from "../api.js";
import { dayChart } from "../chart.js";
import { add, badge, dataTable, h, num, when } from "../dom.js";

const WINDOWS = [7, 30, 90];

function usageTable(rows) {
  const head = ["Entry", "Uses", "Canon", "Whole book", "In full", "Index", "Last used"];
  return dataTable("Use counts per entry", head, rows.map((u) => ({
    data: { entryId: u.entry_id },
    cells: [
      [u.title, u.canon_entry ? [" ", badge("canon")] : null, u.enabled ? null : [" ", badge("disabled", "warn")]],
      ...[u.total, u.canon, u.whole_book, u.full, u.index].map((n) => ({ content: num(n), class: "num" })),
      when(u.last_used_at),
    ],
  })), "No entries.");
}

async function chartSection(book, caps) {
  if (!caps.usageDaily) return null;
  const holder = h("div", { class: "chart-holder" });
  const choose = h("select", { id: "usage-days", "aria-label": "Days shown" },
    WINDOWS.map((d) => h("option", { value: d, selected: d === 30 }, `last ${d} days`)));
  async function draw() {
    const daily = await api.get(`/v1/books/${book.id}/usage/daily`, { query: { days: choose.value } });
    const total = daily.days.reduce((n, d) => n + d.turns, 0);
    holder.replaceChildren(
      dayChart(daily.days, `Turns per day over the last ${daily.days.length} days: ${total} in all`),
      h("p", { class: "muted" }, `${num(total)} turns in the last ${daily.days.length} days (UTC days).`));
  }
  choose.addEventListener("change", () => draw());
  await draw();
  return h("section", { class: "card", "aria-labelledby": "usage-chart" },
    h("div", { class: "section-head" }, h("h2", { id: "usage-chart" }, "Turns per day"), choose), holder);
}

export async function renderUsage(view, { book, caps }) {
  const [usage, page] = await Promise.all([
    api.get(`/v1/books/${book.id}/usage`),
    api.get(`/v1/books/${book.id}/entries`, { query: { limit: 1 } }),
  ]);
  const used = usage.entries.filter((u) => u.total > 0);
  const unused = usage.entries.filter((u) => u.total === 0 && u.enabled);
  const alert = usage.never_surfaced.length
    ? h("div", { class: "alert", role: "note" },
      h("h3", {}, `Never surfaced after ${num(usage.turns)} turns`),
      h("p", {}, "These enabled when-relevant entries never reached the model: check their titles and aliases, or whether they are needed."),
      h("ul", {}, usage.never_surfaced.map((u) => h("li", {}, h("a", { href: `#/book/${book.id}/entry/${u.entry_id}` }, u.title)))))
    : null;
  add(view, 
    h("section", { class: "card", "aria-labelledby": "usage-summary" },
      h("h2", { id: "usage-summary" }, "Summary"),
      h("dl", { class: "facts" },
        h("dt", {}, "Turns served"), h("dd", { id: "turns-served" }, num(usage.turns)),
        h("dt", {}, "Entries used"), h("dd", {}, `${num(used.length)} of ${num(usage.entries.length)}`),
        h("dt", {}, "Core canon"), h("dd", {}, `${num(page.canon_tokens)} tokens every turn (budget ${num(page.canon_budget)})`)),
      page.canon_heavy ? h("p", { class: "alert", role: "note" }, "Heavy canon: it takes most of its budget every turn; move entries to “when relevant”.") : null,
      h("p", { class: "muted" }, `The never-used alert starts after ${num(usage.alert_turns)} turns. Previews are not counted.`)),
    await chartSection(book, caps),
    alert,
    h("section", { class: "card", "aria-labelledby": "most-used" },
      h("h2", { id: "most-used" }, "Most used"), usageTable(used.slice(0, 20))),
    h("section", { class: "card", "aria-labelledby": "never-used" },
      h("h2", { id: "never-used" }, `Never used yet (${unused.length})`),
      unused.length ? h("ul", { class: "plain" }, unused.map((u) => h("li", {},
        h("a", { href: `#/book/${book.id}/entry/${u.entry_id}` }, u.title), u.canon_entry ? [" ", badge("canon")] : null)))
        : h("p", { class: "empty" }, "Every enabled entry has been used.")),
    h("details", { class: "card" }, h("summary", {}, `All entries (${usage.entries.length})`), usageTable(usage.entries)));
}
