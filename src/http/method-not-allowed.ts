/** A registered route as Hono lists it (`app.routes`). */
interface RouteEntry {
  method: string;
  path: string;
}

interface Matcher {
  method: string;
  pattern: RegExp;
}

/**
 * For a path no route answered with the request's method: the methods other routes accept at
 * that path, so the answer can be 405 with `Allow` (as the real service's MethodNotAllowedError)
 * instead of 404. Middleware entries (method `ALL`) are not routes. The table is built on first
 * use and rebuilt when routes were added since.
 */
export function allowedMethods(routes: readonly RouteEntry[]): (path: string) => string[] {
  let built = -1;
  let matchers: Matcher[] = [];
  return (path) => {
    if (built !== routes.length) {
      matchers = routes.filter((r) => r.method !== "ALL").map((r) => ({ method: r.method, pattern: toPattern(r.path) }));
      built = routes.length;
    }
    const methods = new Set<string>();
    for (const m of matchers) if (m.pattern.test(path)) methods.add(m.method);
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  };
}

/** `/v2/:endpoint_id/status/:job_id` → a regular expression; `*` matches the rest of the path. */
function toPattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (segment.startsWith(":")) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}
