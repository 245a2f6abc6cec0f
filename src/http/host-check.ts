import type { IncomingMessage, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { EmulatorError } from "../domain/errors.js";
import type { Logger } from "../domain/logger.js";
import { RecentMap } from "../domain/recent-map.js";
import { writeProblem } from "./problem.js";

/** Names every minipod answers to: they can only lead to this machine. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
/** Addresses that mean every interface: bound to one, minipod is reached by any of the machine's addresses. */
const WILDCARD_ADDRESSES = new Set(["0.0.0.0", "::", "[::]", ""]);
/** Host headers whose verdict is kept (a client sends the same one every time). */
const HOSTS_KEPT = 64;
/** Hosts refused that are named in the log, once each. */
const HOSTS_LOGGED = 100;

/** What hosts a minipod answers: the address it is bound to and the configured `allowedHosts`. */
export interface HostCheckOptions {
  /** The address or name minipod listens on (`--host`). */
  bound: string;
  /** `allowedHosts`: names (".example.test" for a domain and its subdomains), or "all" for no check. */
  allowed: readonly string[] | "all";
  /**
   * Names answered besides, decided at each request (not kept): `{endpoint_id}.localhost` of a
   * load-balancing endpoint that exists now. Loopback-only names, so no rebinding reaches them.
   */
  dynamic?: ((name: string) => boolean) | undefined;
}

/** The host name of a Host header, lower-cased, without its port (IPv6 addresses keep their brackets); undefined when malformed. */
export function hostName(header: string): string | undefined {
  const m = /^(\[[0-9a-f:.]+\]|[^\s:[\]/@]+)(?::\d{1,5})?$/i.exec(header.trim());
  return m?.[1]?.toLowerCase();
}

const isAddress = (name: string): boolean => isIP(name) === 4 || (name.startsWith("[") && isIP(name.slice(1, -1)) === 6);

/**
 * The `Host` allow-list that keeps web pages out by DNS rebinding. A page on `evil.example`
 * whose name is made to resolve to 127.0.0.1 reaches minipod as its own origin, so the browser
 * lets it read every answer; but its requests still say `Host: evil.example`. minipod answers
 * only the names that lead to it and cannot be rebound: its bound address, `localhost`,
 * `127.0.0.1`, `[::1]`, any IP address when bound to all interfaces (a page served from a bare
 * address cannot be rebound), and the names of `allowedHosts`. As Vite's
 * `server.allowedHosts` and webpack-dev-server's `allowedHosts` do.
 */
export class HostCheck {
  private readonly exact = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly anyAddress: boolean;
  private readonly off: boolean;
  private readonly verdicts = new RecentMap<string, boolean>(HOSTS_KEPT);
  private readonly dynamic: ((name: string) => boolean) | undefined;

  constructor(options: HostCheckOptions) {
    this.dynamic = options.dynamic;
    this.off = options.allowed === "all";
    const bound = options.bound.toLowerCase();
    this.anyAddress = WILDCARD_ADDRESSES.has(bound);
    for (const name of [...LOOPBACK_NAMES, isIP(bound) === 6 ? `[${bound}]` : bound, ...(options.allowed === "all" ? [] : options.allowed)]) {
      if (name.startsWith(".")) this.suffixes.push(name);
      else this.exact.add(name.toLowerCase());
    }
  }

  /** Whether a request with this Host header is answered. One without (HTTP/1.0) cannot come from a browser. */
  allows(header: string | undefined): boolean {
    if (this.off || header === undefined) return true;
    let verdict = this.verdicts.get(header);
    if (verdict === undefined) this.verdicts.set(header, (verdict = this.decide(header)));
    if (!verdict && this.dynamic) {
      const name = hostName(header);
      return name !== undefined && this.dynamic(name);
    }
    return verdict;
  }

  private decide(header: string): boolean {
    const name = hostName(header);
    if (name === undefined) return false;
    if (this.exact.has(name)) return true;
    if (this.suffixes.some((s) => name.endsWith(s) || name === s.slice(1))) return true;
    return this.anyAddress && isAddress(name);
  }
}

/** The 403 for a request whose Host is not allowed, saying how to allow it. */
export function hostRefusal(header: string): EmulatorError {
  const shown = header.length > 100 ? `${header.slice(0, 100)}...` : header;
  const name = hostName(header);
  const fix = name
    ? `to allow it, start minipod with --allowed-hosts ${name} or add "${name}" to allowedHosts in the config`
    : "send the Host of the URL minipod printed at start";
  return new EmulatorError(
    "FORBIDDEN",
    `Host '${shown}' is not allowed: minipod answers only requests addressed to itself (its own address, localhost, 127.0.0.1, [::1] or a name in allowedHosts), so that no web page reaches it through a name it controls (DNS rebinding); ${fix}`,
  );
}

/**
 * The node listener's first step: answers a request whose Host is not allowed with 403 (and
 * returns true) before anything else sees it, the route table included. Each refused name is
 * logged once.
 */
export function hostGuard(options: HostCheckOptions, log: Logger): (req: IncomingMessage, res: ServerResponse) => boolean {
  const check = new HostCheck(options);
  const logged = new Set<string>();
  return (req, res) => {
    const host = req.headers.host;
    if (check.allows(host)) return false;
    const err = hostRefusal(host!);
    if (logged.size < HOSTS_LOGGED && !logged.has(host!)) {
      logged.add(host!);
      log.warn(`refused ${req.method} ${req.url?.split("?")[0]}: ${err.message}`);
    }
    writeProblem(res, err);
    return true;
  };
}
