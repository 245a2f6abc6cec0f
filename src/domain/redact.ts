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
