/** Keys whose values are secrets wherever they appear (s3Config.accessSecret, passwords, keys). */
const SECRET_KEY = /secret|password|passwd|token|api[-_]?key|^key$|authorization|credential/i;

export const REDACTED = "[redacted]";

/** A deep copy of a JSON value with every secret-named field replaced by "[redacted]". */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEY.test(k) && v !== null && typeof v !== "object" ? REDACTED : redact(v);
    return out;
  }
  return value;
}

const BODY_KEPT_BYTES = 64 * 1024;

/** A request body as the journal keeps it: parsed, with secrets redacted; a note when too long or not JSON. */
export function keptRequestBody(text: string): unknown {
  if (text.length > BODY_KEPT_BYTES) return `[${text.length} bytes, not kept]`;
  try {
    return redact(JSON.parse(text));
  } catch {
    return "[not JSON]";
  }
}
