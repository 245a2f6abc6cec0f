import { JSON_DEPTH_MAX } from "./limits.js";

/** Keys whose values are secrets wherever they appear (s3Config.accessSecret, passwords, keys). */
const SECRET_KEY = /secret|password|passwd|token|api[-_]?key|^key$|authorization|credential/i;

export const REDACTED = "[redacted]";

/** Whether a field, column or parameter of this name holds a secret. */
export const isSecretName = (name: string): boolean => SECRET_KEY.test(name);

/** A URL's password (`scheme://user:password@host`): shown nowhere. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*:)[^/?#@\s]*@/i;

/** `url` with the password of its user info, if any, replaced by "[redacted]". */
export function withoutPassword(url: string): string {
  return URL_PASSWORD.test(url) ? url.replace(URL_PASSWORD, `$1${REDACTED}@`) : url;
}

/**
 * A deep copy of a JSON value with every secret-named field replaced by "[redacted]", whatever its
 * value (a string, a number, an object, a list), and the password of any URL with user info.
 */
export function redact(value: unknown): unknown {
  if (typeof value === "string") return withoutPassword(value);
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
  if (!/secret|passw|token|key|authorization|credential/i.test(query)) return query;
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

