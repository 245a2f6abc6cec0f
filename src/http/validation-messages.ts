import type { z } from "zod";

type Where = "body" | "query" | "path" | "header";

const TYPE_NAMES: Record<string, string> = { record: "object", int: "integer", nan: "number" };

/**
 * Zod issues as the real service words validation failures: a location (`$`, `$.policy.ttl` for
 * the body; `query.wait`, `path.job_id` otherwise) then a message, e.g.
 * `$.policy.ttl: expected integer` or `$: additional properties 'bogus' not allowed`.
 */
export function formatIssues(issues: readonly z.core.$ZodIssue[], where: Where): string[] {
  return issues.map((issue) => {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
    if (missing && path.length > 0) {
      const name = path[path.length - 1];
      return `${location(where, path.slice(0, -1))}: expected required property ${String(name)} to be present`;
    }
    return `${location(where, path)}: ${message(issue)}`;
  });
}

function location(where: Where, path: Array<string | number>): string {
  if (where === "body") {
    return path.reduce<string>((acc, p) => (typeof p === "number" ? `${acc}[${p}]` : /^[A-Za-z_$][\w$]*$/.test(p) ? `${acc}.${p}` : `${acc}[${JSON.stringify(p)}]`), "$");
  }
  return [where, ...path].join(".");
}

function message(issue: z.core.$ZodIssue): string {
  // Messages written in our schemas already read like the service's ("expected integer").
  if (issue.message.startsWith("expected ")) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}`;
    case "too_small":
      return bound(issue.origin, issue.inclusive ? ">=" : ">", issue.minimum);
    case "too_big":
      return bound(issue.origin, issue.inclusive ? "<=" : "<", issue.maximum);
    case "invalid_format":
      if (issue.format === "url") return "expected string to be RFC 3986 uri";
      if (issue.format === "regex" && "pattern" in issue) return `expected string to match pattern ${String(issue.pattern)}`;
      return `expected string to match format ${issue.format}`;
    case "invalid_value":
      // A schema's own message naming the nearest valid value ("did you mean") says more.
      if (issue.message.startsWith("unknown ")) return issue.message;
      return `expected value to be one of "${issue.values.map(String).join(", ")}"`;
    case "unrecognized_keys":
      return `additional properties ${issue.keys.map((k) => `'${k}'`).join(", ")} not allowed`;
    case "not_multiple_of":
      return `expected number to be a multiple of ${String(issue.divisor)}`;
    case "invalid_union":
      if (issue.message.startsWith("unknown ") || issue.message.startsWith("a fault needs")) return issue.message;
      return "expected value to match one of the allowed forms";
    default:
      return issue.message;
  }
}

function bound(origin: string, op: string, value: unknown): string {
  const v = String(value);
  if (origin === "string") return `expected length ${op} ${v}`;
  if (origin === "array" || origin === "set") return `expected array length ${op} ${v}`;
  return `expected number ${op} ${v}`;
}
