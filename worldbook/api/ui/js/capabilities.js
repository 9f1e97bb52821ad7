// What this server's API accepts, read from its own /openapi.json: the page adapts to the
// server it talks to (book modes, the living-world setting, the write log, glosses) instead of
// assuming a version. Features the API lacks are simply not shown.

import { openApi } from "./api.js";

const FALLBACK = {
  modes: ["world", "classic"],
  visibilities: ["private", "unlisted", "public"],
  roles: ["system", "user", "assistant"],
  livingWorld: null,
  writes: null,
  usageDaily: false,
  glosses: false,
};

let cached = null;

function schemas(doc) {
  return (doc.components && doc.components.schemas) || {};
}

function resolve(doc, schema) {
  // Follow a $ref (and the anyOf FastAPI emits for optional fields) to a schema object.
  if (!schema) return null;
  if (schema.$ref) return schemas(doc)[schema.$ref.split("/").pop()] || null;
  for (const option of schema.anyOf || []) {
    const found = resolve(doc, option);
    if (found && (found.properties || found.enum)) return found;
  }
  return schema;
}

function enumOf(doc, name, fallback) {
  const schema = schemas(doc)[name];
  return schema && Array.isArray(schema.enum) ? schema.enum : fallback;
}

/**
 * Where the living-world switch lives, if the API has one: a top-level book field
 * ("field"), a declared key of the book's settings object ("settings"), or — when the API
 * only shows it through its write log — a settings key ("settings") as well.
 */
function livingWorld(doc, hasWrites) {
  const patch = schemas(doc).BookPatch || {};
  const props = patch.properties || {};
  if (props.living_world) return "field";
  const settings = resolve(doc, props.settings);
  if (settings && settings.properties && settings.properties.living_world) return "settings";
  return hasWrites ? "settings" : null;
}

function writeRoutes(doc) {
  const paths = Object.keys(doc.paths || {});
  const list = paths.find((p) => /^\/v1\/books\/\{[^}]+\}\/writes$/.test(p));
  const undo = paths.find((p) => /^\/v1\/writes\/\{[^}]+\}\/undo$/.test(p));
  return list && undo ? { list, undo } : null;
}

/** The server's capabilities (fetched once; falls back to the oldest API on failure). */
export async function capabilities() {
  if (cached) return cached;
  try {
    const doc = await openApi();
    const writes = writeRoutes(doc);
    cached = {
      modes: enumOf(doc, "BookMode", FALLBACK.modes),
      visibilities: enumOf(doc, "Visibility", FALLBACK.visibilities),
      roles: FALLBACK.roles,
      livingWorld: livingWorld(doc, Boolean(writes)),
      writes,
      usageDaily: Boolean((doc.paths || {})["/v1/books/{book_id}/usage/daily"]),
      glosses: Boolean((doc.paths || {})["/v1/books/{book_id}/glosses"]),
    };
  } catch {
    cached = { ...FALLBACK };
  }
  return cached;
}

/** Classic fields (keys, order, …) apply in every mode but the pure world mode. */
export function hasClassicFields(mode) {
  return mode !== "world";
}

/** Whether a book has the living world switched on, wherever the API keeps it. */
export function livingWorldOn(book, where) {
  if (where === "field") return Boolean(book.living_world);
  return Boolean(book.settings && book.settings.living_world);
}
