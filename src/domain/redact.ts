import { JSON_DEPTH_MAX } from "./limits.js";

/**
 * What the names of secrets contain, wherever they appear: a field (s3Config.accessSecret,
 * passwords, keys), a column, a query parameter (a webhook's `?token=`, a signed URL's
 * `X-Amz-Signature`, `sig`). `^`/`$` mark the parts that must be the whole name.
 */
const SECRET_PARTS = ["secret", "password", "passwd", "token", "api[-_]?key", "^key$", "authorization", "credential", "signature", "^sig$", "^auth$"];
const SECRET_KEY = new RegExp(SECRET_PARTS.join("|"), "i");
/** Whether a text may name a secret anywhere in it (the parts unanchored): a first test before parsing. */
const MAY_NAME_SECRET = new RegExp(SECRET_PARTS.map((p) => p.replace(/^\^|\$$/g, "")).join("|"), "i");

export const REDACTED = "[redacted]";

/** Whether a field, column or parameter of this name holds a secret. */
export const isSecretName = (name: string): boolean => SECRET_KEY.test(name);

/** A URL's password (`scheme://user:password@host`): shown nowhere. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*:)[^/?#@\s]*@/i;
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;

/** `url` with the password of its user info, if any, replaced by "[redacted]". */
export function withoutPassword(url: string): string {
  return URL_PASSWORD.test(url) ? url.replace(URL_PASSWORD, `$1${REDACTED}@`) : url;
}

/**
 * A URL as minipod shows it (a webhook's, in the journal, its attempts, a job's detail, the
 * dashboard and the export): the password of its user info and the values of its secret-named
 * query parameters (`?token=`, `&sig=`) replaced by "[redacted]". What is called is the URL itself.
 */
export function shownUrl(url: string): string {
  const bare = withoutPassword(url);
  const mark = bare.indexOf("?");
  if (mark === -1) return bare;
  const hash = bare.indexOf("#", mark);
  const end = hash === -1 ? bare.length : hash;
  return `${bare.slice(0, mark + 1)}${keptQuery(bare.slice(mark + 1, end))}${bare.slice(end)}`;
}

/**
 * A deep copy of a JSON value with every secret-named field replaced by "[redacted]", whatever its
 * value (a string, a number, an object, a list), and every URL as `shownUrl` shows it.
 */
export function redact(value: unknown): unknown {
  if (typeof value === "string") return URL_START.test(value) ? shownUrl(value) : value;
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = isSecretName(k) && v !== null ? REDACTED : redact(v);
    return out;
  }
  return value;
}

/** The most of one request body the journal keeps (a longer one is noted by its size). */
export const BODY_KEPT_BYTES = 64 * 1024;

/** A query string as the journal keeps it: the values of secret-named parameters redacted. */
export function keptQuery(query: string): string {
  // Most queries name no secret: those are kept as they are, unparsed.
  if (!MAY_NAME_SECRET.test(query)) return query;
  return query
    .split("&")
    .map((pair) => {
      const eq = pair.indexOf("=");
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replaceAll("+", " "));
      } catch {
        /* kept as sent */
      }
      return eq >= 0 && isSecretName(decoded) ? `${name}=${REDACTED}` : pair;
    })
    .join("&");
}

/** How much of an error answer's body the journal keeps (they are problem+json of a few hundred bytes). */
export const RESPONSE_KEPT_CHARS = 4 * 1024;

/** An error answer's body as the journal keeps it: parsed and redacted, or the start of its text. */
export function keptResponseBody(text: string): unknown {
  if (text.length > RESPONSE_KEPT_CHARS) return `${text.slice(0, RESPONSE_KEPT_CHARS)}… [${text.length} characters in all]`;
  try {
    return redact(JSON.parse(text));
  } catch {
    return text;
  }
}

/** A request body as the journal keeps it: parsed, with secrets redacted; a note when too long or not JSON. */
export function keptRequestBody(text: string): unknown {
  if (text.length > BODY_KEPT_BYTES) return `[${text.length} bytes, not kept]`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "[not JSON]";
  }
  // Refused bodies are journaled too: one too deep to copy and store is not kept.
  if (text.length > 2 * JSON_DEPTH_MAX && nestsDeeperThan(value, JSON_DEPTH_MAX)) return `[nested more than ${JSON_DEPTH_MAX} levels, not kept]`;
  return redact(value);
}

/** Whether arrays and objects in `value` nest more than `max` levels (walked without recursion). */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

