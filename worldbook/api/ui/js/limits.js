// The DESIGN §6 limits, checked as the author types. The server checks them again (it is the
// authority) and says what they are: LIMITS is filled from GET /v1/limits (no key needed)
// before the first view renders, so the page never holds a copy that can drift. Names are
// the server's (worldbook/core/limit_table.py). Lengths count code points, like Python's
// len(); for the minimums only, an East Asian wide or full-width character counts as two
// (same table as the server, see eaw.js).

import { api } from "./api.js";
import { WIDE_RANGES } from "./eaw.js";

export const LIMITS = {};

let loading = null;

/** Read the server's limits into LIMITS, once per page load (again after a failure). */
export function loadLimits() {
  if (!loading) {
    loading = api.get("/v1/limits").then(
      (answer) => { Object.assign(LIMITS, answer); },
      (error) => { loading = null; throw error; });
  }
  return loading;
}

function isWide(codePoint) {
  // Binary search over the [start, end] pairs.
  let lo = 0;
  let hi = WIDE_RANGES.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (codePoint < WIDE_RANGES[2 * mid]) hi = mid - 1;
    else if (codePoint > WIDE_RANGES[2 * mid + 1]) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Code points, as Python's len() counts them (a JS string's length counts UTF-16 units). */
export function length(text) {
  return [...text].length; // a string's iterator walks code points
}

/** The length that the minimums use: wide characters count twice. */
export function weightedLength(text) {
  let n = 0;
  for (const ch of text) n += isWide(ch.codePointAt(0)) ? 2 : 1;
  return n;
}

const fmt = (n) => n.toLocaleString("en-US");

/** A text field's problem, or "" when it is fine. */
export function checkText(value, { max, min = 0, required = false, label }) {
  if (required && !value.trim()) return `${label} must not be empty or only whitespace.`;
  const count = length(value);
  if (count > max) return `${label}: at most ${fmt(max)} characters (${fmt(count)} now).`;
  if (min) {
    const weight = weightedLength(value.trim());
    if (weight < min) {
      return `${label}: at least ${fmt(min)} characters (${fmt(weight)} now; East Asian wide characters count as two).`;
    }
  }
  return "";
}

/** A list field's problem (one item per line in the editor), or "". */
export function checkList(items, { maxItems, maxLength, label }) {
  if (items.length > maxItems) return `${label}: at most ${fmt(maxItems)} (${fmt(items.length)} now).`;
  const long = items.findIndex((item) => length(item) > maxLength);
  if (long >= 0) return `${label}: each at most ${fmt(maxLength)} characters (line ${long + 1} has ${fmt(length(items[long]))}).`;
  return "";
}

/** A whole-number field's problem, or "". Empty is fine only when `optional`. */
export function checkInt(raw, { min, max, label, optional = false }) {
  if (raw === "" || raw === null || raw === undefined) return optional ? "" : `${label} is required.`;
  if (!/^-?\d+$/.test(String(raw).trim())) return `${label} must be a whole number.`;
  const value = Number(raw);
  if (value < min || value > max) return `${label} must be within ${fmt(min)}–${fmt(max)}.`;
  return "";
}

/** Split a textarea into list items: one per line, blank lines dropped, ends trimmed. */
export function lines(text) {
  return text.split("\n").map((line) => line.trim()).filter(Boolean);
}

/** Split comma-separated tags. */
export function commaList(text) {
  return text.split(",").map((item) => item.trim()).filter(Boolean);
}
