import type { Params, Result, Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { RecentMap } from "../domain/recent-map.js";

/** How many recent paths keep their match. */
const PATHS_KEPT = 2_000;
/** How many methods keep matches of their paths. */
const METHODS_KEPT = 16;

/**
 * Hono's trie router with the matches of recent paths kept, and, given `fuse`, the handlers of a
 * match handed to Hono as one.
 *
 * Kept matches: clients poll the same `/status/{id}` and `/health` paths over and over, and the
 * trie search was about 5 % of a `GET /status`. (Hono's faster RegExpRouter refuses this route
 * set.) A match depends only on the method, the path and the routes, so a kept one is still
 * right; adding a route forgets them all. Bounded: the oldest paths of a method leave first.
 *
 * One handler: Hono runs several matched handlers (middleware, then the route) through its
 * `compose`, which makes every answer a promise; one handler it calls directly, and takes its
 * answer as it comes (see `chain`). `fuse` makes one handler of the matched ones, once per list
 * of handlers. Hono hands a handler the params of its own match, and one handler has one set: the
 * route's, which the middleware (declared on wildcard paths, without params) see too. A match
 * whose handlers have differing params is left to Hono's chain.
 */
export class RecentPathsRouter<T> implements Router<T> {
  readonly name = "RecentPathsRouter";
  private readonly trie = new TrieRouter<T>();
  private readonly kept = new Map<string, RecentMap<string, Result<T>>>();
  /** Each handler's number, in the order added: a list of handlers is known by its numbers. */
  private readonly numbers = new Map<T, number>();
  private readonly fused = new Map<string, T>();
  /** The literal segments of the routes' paths, and whether a route has a segment matched by a pattern (a regex param, a prefix wildcard). */
  private readonly literals = new Set<string>();
  private patterned = false;

  constructor(private readonly fuse?: (handlers: T[]) => T) {}

  add(method: string, path: string, handler: T): void {
    this.kept.clear();
    this.fused.clear();
    for (const segment of path.split("/")) {
      if (segment.startsWith(":")) this.patterned ||= segment.includes("{");
      else if (segment.endsWith("*")) this.patterned ||= segment !== "*";
      else this.literals.add(segment);
    }
    if (!this.numbers.has(handler)) this.numbers.set(handler, this.numbers.size);
    this.trie.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    // By method, then path: a key made of both would be a new string to hash on every request.
    let paths = this.kept.get(method);
    if (paths === undefined) {
      // Methods are few over HTTP (node's parser knows a fixed set), not in process: bounded too.
      if (this.kept.size >= METHODS_KEPT) return this.one(this.trie.match(method, path));
      this.kept.set(method, (paths = new RecentMap(PATHS_KEPT)));
    }
    let result = paths.get(path);
    if (result === undefined) {
      result = this.one(this.trie.match(method, path));
      paths.set(path, result);
    }
    return result;
  }

  /**
   * Whether `segment` is matched by every route only as a plain param or under a wildcard: no
   * route has it as a literal segment, and no route matches a segment by a pattern. Two paths
   * that differ only in such a segment then match the same handlers, with that param's value the
   * only difference (Hono's trie compares a segment with literals, patterns and plain params).
   */
  paramOnly(segment: string): boolean {
    return segment !== "" && !this.patterned && !this.literals.has(segment);
  }

  /** The handlers a request matches, in order, each as added with its params (not fused, not kept). */
  matchesOf(method: string, path: string): Array<[T, Params]> {
    return this.trie.match(method, path)[0] as Array<[T, Params]>;
  }

  private one(result: Result<T>): Result<T> {
    const matched = result[0] as Array<[T, Params]>;
    if (!this.fuse || matched.length === 0 || result.length !== 1) return result;
    // One set of params for all: the handlers that have params (routes) must agree on them.
    // Overlapping routes (`/v2/network-volumes/{id}` and `/v2/{endpoint_id}/health`) do not,
    // and keep Hono's own chain.
    let params: Params = {};
    for (const [, p] of matched) {
      if (Object.keys(p).length === 0) continue;
      if (Object.keys(params).length > 0 && !sameParams(p, params)) return result;
      params = p;
    }
    const handlers = matched.map(([h]) => h);
    const key = handlers.map((h) => this.numbers.get(h)).join(",");
    let handler = this.fused.get(key);
    if (handler === undefined) this.fused.set(key, (handler = this.fuse(handlers)));
    return [[[handler, params]]];
  }
}

function sameParams(a: Params, b: Params): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
