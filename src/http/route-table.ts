import type { IncomingMessage, ServerResponse } from "node:http";
import type { MiddlewareHandler } from "hono";
import type { RouterRoute } from "hono/types";
import { REQUEST_FAULTS, type FaultRules } from "../domain/faults.js";
import { RecentMap } from "../domain/recent-map.js";
import { honoPath } from "./checked-routes.js";

/** How many paths of a method keep which entry answers them (clients poll /status of many jobs). */
const PATHS_KEPT = 2_000;
/** How many of the paths used about once each (see `FastEntry.oneOff`) are kept, apart. */
const ONE_OFF_PATHS_KEPT = 64;
/** How many of their folders (a path but its last segment: a worker's job-done) keep what matched a path in them. */
const ONE_OFF_FOLDERS_KEPT = 64;

/**
 * A route of the table answered from node's request and response rather than through Hono: its
 * own reading of the request (the same declarations and functions as its Hono route), behind the
 * same gate. `A` is what it knows of a path once, kept with the path.
 */
export interface FastEntry<A = unknown> {
  /**
   * Its paths are each used about once (a job's own, as a worker's job-done): kept apart from the
   * others, so that a path per job does not push out those used again and again.
   */
  readonly oneOff?: boolean;
  /** What is known of a path this route matched, or null when the path is left to Hono (kept per path). */
  accepts(method: string, path: string, params: Record<string, string>): A | null;
  /**
   * Answers the request and returns true, or returns false having touched nothing (Hono answers it).
   * `query` is the query string without its `?`, undefined when there is none (`?` alone is "").
   */
  take(req: IncomingMessage, res: ServerResponse, known: A, path: string, query: string | undefined): boolean;
  /**
   * What is known of a path that differs from one it accepted (`known`) only in its last segment,
   * its route's last param `name`, here `value`: as `accepts` would say, or null (left to Hono).
   * Without it, `accepts` is asked.
   */
  sibling?(known: A, name: string, value: string): A | null;
}

interface Known {
  entry: FastEntry;
  known: unknown;
}

/** What matched a path of a one-off entry whose last segment is its route's last param: its folder's other paths match alike. */
interface Folder {
  entry: FastEntry;
  /** What the entry knew of the path, its params, and the name of the param its last segment is. */
  known: unknown;
  params: Record<string, string>;
  last: string;
}

/** The handlers the app's router matches for a request, in order, each with its route and params. */
export type Matcher = (method: string, path: string) => Array<[[unknown, RouterRoute], Record<string, string>]>;

/**
 * The app's route table, as the pipeline dispatches on it: each route is Hono's, and a route may
 * also have a fast entry. A request whose match in the app's one router is the gate and then a
 * route with a fast entry (nothing else: no guard or other middleware) is offered to that entry;
 * everything else, and everything the entry leaves, goes through Hono.
 *
 * While a request fault rule is armed every request goes through Hono, so that the rule fires
 * with the gate's answers as Hono makes them (a dropped connection, a delay).
 */
export class RouteTable {
  /** By method, then the route's path as Hono routes it. */
  private readonly entries = new Map<string, Map<string, FastEntry>>();
  /** By method, then path: the entry and what it knows of the path, null for one left to Hono. */
  private readonly paths = new Map<string, RecentMap<string, Known | null>>();
  /** The same for the paths of entries whose paths are used about once (`FastEntry.oneOff`). */
  private readonly oneOffPaths = new Map<string, RecentMap<string, Known>>();
  /** By method, then folder (a path but its last segment, with its `/`): see `Folder`. */
  private readonly folders = new Map<string, RecentMap<string, Folder>>();

  /**
   * @param paramOnly whether a segment is matched by every route only as a plain param or under a
   *   wildcard (see `RecentPathsRouter.paramOnly`): a one-off path whose last segment is one is
   *   matched as the paths of its folder were, without asking the router.
   */
  constructor(
    private readonly faults: Pick<FaultRules, "armed">,
    private readonly gate: MiddlewareHandler,
    private readonly match: Matcher,
    private readonly paramOnly: (segment: string) => boolean = () => false,
  ) {}

  /** A route's fast entry: `path` as declared (`/v2/{endpoint_id}/run`). */
  add(method: string, path: string, entry: FastEntry): void {
    const upper = method.toUpperCase();
    let byPath = this.entries.get(upper);
    if (!byPath) this.entries.set(upper, (byPath = new Map()));
    byPath.set(honoPath(path), entry);
  }

  /** Answers the request from a fast entry and returns true, or returns false having touched nothing. */
  take(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.faults.armed(REQUEST_FAULTS)) return false;
    const method = req.method ?? "";
    const url = req.url ?? "";
    const mark = url.indexOf("?");
    const path = mark === -1 ? url : url.slice(0, mark);
    let paths = this.paths.get(method);
    if (paths === undefined) {
      // Hono answers HEAD from the GET routes; other methods only when a route has them.
      if (!this.entries.has(method === "HEAD" ? "GET" : method)) return false;
      this.paths.set(method, (paths = new RecentMap(PATHS_KEPT)));
    }
    let known = paths.get(path);
    if (known === undefined) known = this.learn(method, path, paths);
    if (known === null) return false;
    return known.entry.take(req, res, known.known, path, mark === -1 ? undefined : url.slice(mark + 1));
  }

  /** What answers a path not in `paths`: from the one-off paths, or matched and kept in the map it belongs to. */
  private learn(method: string, path: string, paths: RecentMap<string, Known | null>): Known | null {
    let oneOff = this.oneOffPaths.get(method);
    const kept = oneOff?.get(path);
    if (kept !== undefined) return kept;
    const known = this.inFolder(method, path) ?? this.known(method, path);
    if (known?.entry.oneOff !== true) paths.set(path, known);
    else {
      if (oneOff === undefined) this.oneOffPaths.set(method, (oneOff = new RecentMap(ONE_OFF_PATHS_KEPT)));
      oneOff.set(path, known);
    }
    return known;
  }

  private known(method: string, path: string): Known | null {
    const matches = this.match(method === "HEAD" ? "GET" : method, path);
    if (matches.length < 2 || matches[0]![0][1].handler !== this.gate) return null;
    const byPath = this.entries.get(method === "HEAD" ? "GET" : method);
    // The routes after the gate (a path may match a route and its wildcard form) share one entry.
    const entry = byPath?.get(matches[1]![0][1].path);
    if (entry === undefined || matches.slice(2).some(([[, route]]) => byPath!.get(route.path) !== entry)) return null;
    const params = matches[matches.length - 1]![1];
    const known = entry.accepts(method, path, params);
    if (known === null) return null;
    if (entry.oneOff === true && matches.length === 2) this.keepFolder(method, path, { entry, known, params, last: matches[1]![0][1].path });
    return { entry, known };
  }

  /** What matches a one-off path as the other paths of its folder matched, undefined when unknown. */
  private inFolder(method: string, path: string): Known | null | undefined {
    const slash = path.lastIndexOf("/");
    const folder = this.folders.get(method)?.get(path.slice(0, slash + 1));
    const segment = path.slice(slash + 1);
    if (folder === undefined || !this.paramOnly(segment)) return undefined;
    const { entry } = folder;
    const known = entry.sibling ? entry.sibling(folder.known, folder.last, segment) : entry.accepts(method, path, { ...folder.params, [folder.last]: segment });
    return known === null ? null : { entry, known };
  }

  /**
   * Keeps the folder of a one-off path whose last segment is its route's last param (and only a
   * param, for every route); `folder.last` comes as the route's path.
   */
  private keepFolder(method: string, path: string, folder: Folder): void {
    const slash = path.lastIndexOf("/");
    const routeLast = folder.last.slice(folder.last.lastIndexOf("/") + 1);
    const last = routeLast.slice(1);
    if (!routeLast.startsWith(":") || !/^\w+$/.test(last) || folder.params[last] !== path.slice(slash + 1) || !this.paramOnly(path.slice(slash + 1))) return;
    let folders = this.folders.get(method);
    if (folders === undefined) this.folders.set(method, (folders = new RecentMap(ONE_OFF_FOLDERS_KEPT)));
    folders.set(path.slice(0, slash + 1), { ...folder, params: { ...folder.params }, last });
  }
}
