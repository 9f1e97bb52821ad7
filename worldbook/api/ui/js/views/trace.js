// Renders one selection (the JSON of POST /v1/preview or /v1/select): canon and its cost,
// what goes in full, what only in the world index, what the literal matcher caught and in
// which message, the semantic scores, every other entry's fate with its reason, and the
// rendered prompt. Everything shown comes from the selection's `canon`, `injected`, `index`
// and `trace`; the reasons are the server's own words.

import { badge, dataTable, h, num } from "../dom.js";

const SCORE = /semantic: score (-?\d+(?:\.\d+)?)/;
const LITERAL = /literal: named as '(.*?)' (in .*?)(?:;|$)/;
const GLOSS = /through its generated (\S+) gloss/;

/** The semantic score a trace reason reports, or null. */
export function scoreOf(reason) {
  const match = SCORE.exec(reason || "");
  return match ? Number(match[1]) : null;
}

/** What the literal matcher caught: {alias, where} or null. */
export function literalOf(reason) {
  const match = LITERAL.exec(reason || "");
  return match ? { alias: match[1], where: match[2] } : null;
}

/** A mark for an entry found through a generated gloss (ADR 0023), or null. */
function glossBadge(reason) {
  const match = GLOSS.exec(reason || "");
  return match ? [" ", badge(`found by its ${match[1]} gloss`, "generated")] : null;
}

function section(id, title, ...content) {
  return h("section", { class: "card result", id, "aria-labelledby": `${id}-h` }, h("h2", { id: `${id}-h` }, title), content);
}

function canonSection(sel, reasons) {
  const { canon } = sel;
  return section("canon", "Canon",
    h("p", { class: "canon-cost" }, `Core canon: ${num(canon.tokens)} tokens every turn (budget ${num(canon.budget)}).`),
    dataTable("Canon entries", ["Entry", "Tokens", "Why"], canon.entries.map((e) => ({
      data: { entryId: e.entry_id },
      cells: [e.title, { content: num(e.tokens), class: "num" }, reasons.get(e.entry_id) || "canon"],
    })), "No canon entries."),
    canon.over_budget.length
      ? h("div", { class: "alert", role: "note" }, h("h3", {}, "Canon over budget (not sent)"),
        h("ul", {}, canon.over_budget.map((e) => h("li", {}, `${e.title} — ${num(e.tokens)} tokens`))))
      : null);
}

function fullSection(sel, reasons) {
  return section("in-full", `In full (${sel.injected.length})`,
    h("p", { class: "muted" }, `Per-turn lore: ${num(sel.per_turn_tokens)} of ${num(sel.per_turn_budget)} tokens.`),
    dataTable("Entries sent in full", ["Entry", "Path", "Tokens", "Why"], sel.injected.map((e) => ({
      data: { entryId: e.entry_id, via: e.via },
      cells: [
        [e.title, e.character ? h("span", { class: "muted" }, ` (${e.character})`) : null],
        [badge(e.via), e.truncated ? [" ", badge("cut", "warn")] : null],
        { content: [num(e.cost), e.cost !== e.tokens ? h("span", { class: "muted" }, ` of ${num(e.tokens)}`) : null], class: "num" },
        reasons.get(e.entry_id) || e.via,
      ],
    })), "Nothing in full this turn."));
}

function indexSection(sel, reasons) {
  return section("world-index", `Only in the world index (${sel.index.length})`,
    h("p", { class: "muted" }, "One line each: the model knows the topic exists",
      sel.tools.length ? " and can look it up with the tool." : "."),
    dataTable("World index", ["Entry", "Line sent", "Why"], sel.index.map((e) => ({
      data: { entryId: e.entry_id },
      cells: [[e.title, e.linked ? [" ", badge("linked")] : null], { content: e.line, class: "line" }, reasons.get(e.entry_id) || ""],
    })), "No world index this turn."));
}

function literalSection(sel) {
  const rows = sel.trace.map((t) => ({ t, hit: literalOf(t.reason) })).filter((x) => x.hit);
  return section("literal", `Named explicitly (${rows.length})`,
    dataTable("Literal matches", ["Entry", "Matched", "In", "Fate"], rows.map(({ t, hit }) => ({
      data: { entryId: t.entry_id },
      cells: [t.title, `“${hit.alias}”`, hit.where.replace(/^in /, ""), badge(t.decision)],
    })),
    "No entry named in the last user message or the character's last replies."));
}

function semanticSection(sel) {
  const rows = sel.trace.map((t) => ({ t, score: scoreOf(t.reason) })).filter((x) => x.score !== null)
    .sort((a, b) => b.score - a.score);
  const top = rows.length ? Math.max(...rows.map((r) => Math.abs(r.score)), 1e-9) : 1;
  return section("semantic", `Close in meaning (${rows.length})`,
    dataTable("Semantic scores", ["Entry", "Score", "Fate"], rows.map(({ t, score }) => {
      const bar = h("span", { class: "bar" });
      bar.style.width = `${Math.max(0, (score / top) * 100).toFixed(1)}%`; // CSSOM: allowed by the CSP
      return {
        data: { entryId: t.entry_id },
        cells: [[t.title, glossBadge(t.reason)], { content: [h("span", { class: "bar-track" }, bar), score.toFixed(3)], class: "num score-cell" }, badge(t.decision)],
      };
    }), sel.whole_books.length ? "The whole book travels: no ranking needed." : "No semantic ranking this turn (nothing indexed yet, or not needed)."));
}

function leftOutSection(sel) {
  const rows = sel.trace.filter((t) => t.decision === "left_out");
  return section("left-out", `Left out (${rows.length})`,
    dataTable("Entries left out", ["Entry", "Reason"], rows.map((t) => ({
      data: { entryId: t.entry_id || "" },
      cells: [t.entry_id ? t.title : h("em", {}, `Book: ${t.title}`), t.reason],
    })), "Nothing was left out."));
}

function readable(which, sel) {
  // The prompt as the model reads it: one block per message (OpenAI) or system block
  // (Anthropic), then the tool definitions when the model gets the lookup tool.
  const blocks = which === "anthropic"
    ? sel.anthropic.system.map((b, i) => [`system block ${i + 1}${b.cache_control ? " · cached prefix" : ""}`, b.text || JSON.stringify(b)])
    : sel.messages.map((m) => [m.role, m.content]);
  const tools = which === "anthropic" ? sel.anthropic.tools : sel.tools;
  return [
    ...blocks.map(([head, text]) => h("div", { class: "prompt-block" }, h("h3", {}, head), h("pre", { class: "prompt" }, text))),
    blocks.length ? null : h("p", { class: "empty" }, "No lore this turn: the prompt gets nothing from worldbook."),
    tools && tools.length ? h("div", { class: "prompt-block" }, h("h3", {}, "tools"), h("pre", { class: "prompt" }, JSON.stringify(tools, null, 2))) : null,
  ];
}

function promptSection(sel) {
  const body = h("div", { class: "prompt-body" });
  const asJson = h("input", { type: "checkbox", id: "prompt-json" });
  let which = "openai";
  const show = () => {
    if (asJson.checked) {
      const value = which === "anthropic" ? sel.anthropic : { messages: sel.messages, tools: sel.tools };
      body.replaceChildren(h("pre", { class: "prompt", tabindex: "0" }, JSON.stringify(value, null, 2)));
    } else {
      body.replaceChildren(...readable(which, sel).filter(Boolean));
    }
  };
  const choice = (value, label, checked) => {
    const radio = h("input", { type: "radio", name: "prompt-format", value, checked });
    radio.addEventListener("change", () => { which = value; show(); });
    return h("label", {}, radio, ` ${label}`);
  };
  asJson.addEventListener("change", show);
  show();
  return h("details", { class: "card result", id: "prompt" },
    h("summary", {}, "Rendered prompt"),
    h("div", { class: "choices" },
      h("div", { role: "radiogroup", "aria-label": "Format", class: "choices" },
        choice("openai", "OpenAI messages", true), choice("anthropic", "Anthropic system blocks", false)),
      h("label", {}, asJson, " as JSON")),
    body);
}

/** The whole selection, section by section. */
export function renderSelection(sel) {
  const reasons = new Map(sel.trace.filter((t) => t.entry_id).map((t) => [t.entry_id, t.reason]));
  const facts = [];
  if (sel.whole_books.length) facts.push(`Whole book travels (${sel.whole_books.length} book${sel.whole_books.length > 1 ? "s" : ""}): every enabled entry fits, no matching step.`);
  if (sel.fallback_books.length) facts.push("Not mostly indexed yet: literal matches plus list order stand in for meaning.");
  return h("div", { class: "selection" },
    facts.length || sel.notes.length ? h("ul", { class: "notes" }, [...facts, ...sel.notes].map((n) => h("li", {}, n))) : null,
    canonSection(sel, reasons), fullSection(sel, reasons), indexSection(sel, reasons),
    literalSection(sel), semanticSection(sel), leftOutSection(sel), promptSection(sel));
}
