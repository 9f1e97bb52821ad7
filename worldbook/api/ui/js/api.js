// The page's only way to the server: the public /v1 API, on this page's own origin.
// Credentials live in sessionStorage (this tab, until it closes), never in localStorage
// or cookies, so closing the tab signs out and no other site can send them for us.

// The server's root: the page lives at <root>/ui/, so a deployment behind a path prefix works.
const ROOT = window.location.pathname.replace(/\/ui(\/.*)?$/, "");

const KEY = "worldbook.apiKey";
const USER = "worldbook.user";

export const session = {
  get key() { return sessionStorage.getItem(KEY) || ""; },
  get user() { return sessionStorage.getItem(USER) || ""; },
  get signedIn() { return Boolean(this.key && this.user); },
  save(key, user) {
    sessionStorage.setItem(KEY, key);
    sessionStorage.setItem(USER, user);
  },
  clear() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(USER);
  },
};

/** An error answer of the API: {"error": {"code", "message", "field"?}} plus the status. */
export class ApiError extends Error {
  constructor(status, code, message, field) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || null;
  }
}

function headers(extra = {}, credentials = session) {
  return {
    Authorization: `Bearer ${credentials.key}`,
    "X-Worldbook-User": credentials.user,
    ...extra,
  };
}

async function failure(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON: a proxy's page, say */ }
  const error = body && body.error;
  if (error) return new ApiError(response.status, error.code, error.message, error.field);
  return new ApiError(response.status, "http_" + response.status, response.statusText || "Request failed");
}

/**
 * Call the API. `path` starts with "/v1/"; a relative URL keeps every request on this origin.
 * Returns the parsed JSON (or null for 204); throws ApiError on any error answer.
 */
export async function call(method, path, { json, body, query, credentials, raw } = {}) {
  const url = new URL(ROOT + path, window.location.origin);
  for (const [name, value] of Object.entries(query || {})) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(name, value);
  }
  const init = { method, headers: headers({}, credentials || session) };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers["Content-Type"] = "application/json";
  } else if (body !== undefined) {
    init.body = body; // FormData: the browser sets the multipart boundary itself
  }
  let response;
  try {
    response = await fetch(url.pathname + url.search, init);
  } catch {
    throw new ApiError(0, "network", "The server did not answer; is it running?");
  }
  if (!response.ok) throw await failure(response);
  if (raw) return response;
  if (response.status === 204) return null;
  return response.json();
}

export const api = {
  get: (path, options) => call("GET", path, options),
  post: (path, json, options = {}) => call("POST", path, { ...options, json }),
  patch: (path, json, options = {}) => call("PATCH", path, { ...options, json }),
  put: (path, options) => call("PUT", path, options),
  del: (path, options) => call("DELETE", path, options),
  upload: (path, file, query) => {
    const form = new FormData();
    form.append("file", file, file.name);
    return call("POST", path, { body: form, query });
  },
  /** A file the API answers with (export): the bytes and the server's file name. */
  async file(path, query) {
    const response = await call("GET", path, { query, raw: true });
    const disposition = response.headers.get("Content-Disposition") || "";
    const match = /filename="([^"]+)"/.exec(disposition);
    return { blob: await response.blob(), filename: match ? match[1] : "export.json" };
  },
};

/** The API's OpenAPI document (no key needed), fetched once per page load. */
let openapi = null;
export async function openApi() {
  if (!openapi) {
    const response = await fetch(ROOT + "/openapi.json");
    if (!response.ok) throw new ApiError(response.status, "openapi", "Cannot read /openapi.json");
    openapi = await response.json();
  }
  return openapi;
}
