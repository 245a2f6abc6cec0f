import { LB_PATH_PREFIX } from "../../domain/load-balancer/types.js";

const LB_PREFIX = `${LB_PATH_PREFIX}/`;
/** "." and "..", a dot written as `%2e` too, as URL parsers (WHATWG's, most servers') read them. */
const ONE_DOT = /^(?:\.|%2e)$/i;
const TWO_DOTS = /^(?:\.|%2e){2}$/i;
/** Whether a path may need resolving: a segment that starts with a dot, or a leading `//` or `/\`. */
const MAY_RESOLVE = /\/(?:\.|%2e)|^\/[/\\]/i;
/** A leading run of slashes, a backslash counted as one. */
const LEADING_SLASHES = /^\/[/\\]+/;
const BACKSLASHES = /\\/g;

/**
 * A path with its backslashes percent-encoded (`%5C`). Past the leading run (a slash there, see
 * `withoutDotSegments`), a backslash is a character of a segment; sent raw, node's adapter of the
 * app refuses the request (400) while the relay would pass it on, and a worker's WHATWG parser
 * would read it as a slash. Encoded, every way in (the relay, the app, by host, an upgrade) sends
 * the worker the same path, which it decodes to the backslash it was.
 */
const backslashesEncoded = (path: string): string => (path.includes("\\") ? path.replace(BACKSLASHES, "%5C") : path);

/**
 * `path` (starting with `/`) with its dot segments resolved, as RFC 3986's remove_dot_segments
 * does (`/a/b/../c` is `/a/c`; `..` never climbs above `/`), `%2e` read as a dot. A leading `//`
 * becomes `/`: a worker's URL parser would read `//host/x` as another host; so would it
 * `/\host/x` (WHATWG's parser takes `\` for `/`), so a backslash in the leading run counts as
 * a slash. Empty segments inside (`/a//b`) are kept, as the request sent them.
 */
export function withoutDotSegments(path: string): string {
  if (!MAY_RESOLVE.test(path)) return path;
  const segments = path.split("/");
  const out: string[] = [];
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (ONE_DOT.test(segment)) {
      if (last) out.push("");
    } else if (TWO_DOTS.test(segment)) {
      out.pop();
      if (last) out.push("");
    } else out.push(segment);
  }
  return `/${out.join("/")}`.replace(LEADING_SLASHES, "/");
}

/**
 * A load-balancing endpoint's request target (`/lb/{endpoint_id}/path?query`) with the path after
 * the endpoint's id resolved (`withoutDotSegments`) as a proxy in front of the service's workers
 * would, within the worker's own path space: `/lb/a/../../x` reaches a's worker as `/x`, and
 * `/lb/a/../b/x` as `/b/x` of a's worker, never b's; then any backslash left in its path
 * percent-encoded (`backslashesEncoded`; the query is left as sent). Any other target is returned as it is.
 */
export function resolvedLbTarget(url: string): string {
  if (!url.startsWith(LB_PREFIX)) return url;
  const mark = url.indexOf("?");
  const path = mark === -1 ? url : url.slice(0, mark);
  const idEnd = path.indexOf("/", LB_PREFIX.length);
  // `/lb/../x` names no endpoint: the app resolves it as a whole, as any path.
  const query = mark === -1 ? "" : url.slice(mark);
  if (idEnd === -1) return `${backslashesEncoded(path)}${query}`;
  if (idEnd === LB_PREFIX.length || ONE_DOT.test(path.slice(LB_PREFIX.length, idEnd)) || TWO_DOTS.test(path.slice(LB_PREFIX.length, idEnd))) return url;
  const rest = path.slice(idEnd);
  const resolved = backslashesEncoded(path.slice(0, idEnd)) + backslashesEncoded(withoutDotSegments(rest));
  return resolved === path ? url : `${resolved}${query}`;
}
