import type { AuthConfig } from "../config/auth-schema.js";
import { EmulatorError } from "../domain/errors.js";
import { SCOPES, type Scope } from "../domain/operations.js";
import type { ServiceRoute } from "./surfaces.js";

/** Who is calling and what the request is, once authenticated. */
export interface Caller {
  /** The API key (for per-key counters; never logged or returned). */
  key: string;
  scopes: ReadonlySet<Scope>;
  rateLimitExempt: boolean;
  route: ServiceRoute;
}

const ALL_SCOPES: ReadonlySet<Scope> = new Set(SCOPES);
const ANY_KEY = { scopes: ALL_SCOPES, rateLimitExempt: false } as const;

/** The configured API keys, or, with none configured, any non-empty key with every scope. */
export class ApiKeys {
  private readonly keys = new Map<string, { scopes: ReadonlySet<Scope>; rateLimitExempt: boolean }>();

  constructor(config: AuthConfig) {
    for (const k of config.keys) this.keys.set(k.key, { scopes: k.scopes ? new Set(k.scopes) : ALL_SCOPES, rateLimitExempt: k.rateLimitExempt });
  }

  /** True when no key is configured: any non-empty key is accepted (the banner says so). */
  get open(): boolean {
    return this.keys.size === 0;
  }

  /** `keyFromHeader`, remembering the last header read: a client sends the same one every time. */
  parse(header: string | undefined, bareAllowed: boolean): { key: string } | { problem: string } {
    const last = this.lastParsed;
    if (last && last.header === header && last.bareAllowed === bareAllowed) return last.parsed;
    const parsed = keyFromHeader(header, bareAllowed);
    this.lastParsed = { header, bareAllowed, parsed };
    return parsed;
  }

  private lastParsed: { header: string | undefined; bareAllowed: boolean; parsed: { key: string } | { problem: string } } | undefined;

  lookup(key: string): { scopes: ReadonlySet<Scope>; rateLimitExempt: boolean } | undefined {
    if (this.open) return ANY_KEY;
    return this.keys.get(key);
  }
}

const BEARER = /^bearer(?:\s+(.*))?$/i;

/**
 * The key of an `Authorization` header: `Bearer <key>` everywhere; on queue and worker routes
 * also the bare `<key>` (the real service's curl examples and workers send it so).
 */
export function keyFromHeader(header: string | undefined, bareAllowed: boolean): { key: string } | { problem: string } {
  const value = header?.trim() ?? "";
  if (value === "") return { problem: bareAllowed ? "missing API key: send Authorization: Bearer <key>" : "missing bearer token" };
  const bearer = BEARER.exec(value);
  if (bearer) {
    const token = bearer[1]?.trim() ?? "";
    if (token === "" || /\s/.test(token)) return { problem: 'malformed Authorization header: expected "Bearer <API key>"' };
    return { key: token };
  }
  if (bareAllowed && !/\s/.test(value)) return { key: value };
  return { problem: bareAllowed ? 'malformed Authorization header: expected "Bearer <API key>" or the bare key' : 'malformed Authorization header: expected "Bearer <API key>"' };
}

const unauthorized = (detail: string) => new EmulatorError("UNAUTHORIZED", detail);
/** Where the keys come from, said with each 401: a client's key is set on one side, minipod's on the other. */
const OPEN_KEYS = "any non-empty key is accepted: auth.keys of minipod's config is empty";
const CONFIGURED_KEYS = "minipod accepts the keys listed in auth.keys of its config";

/**
 * Where the steps before a route put the headers its answer carries, whatever the answer turns
 * out to be: Hono's `Context` (its `header(name, value)`), or the answer of a direct route.
 */
export interface HeaderSink {
  header(name: string, value: string): void;
}

/**
 * Authentication of a service route (`/v1/*`, `/v2/*`) from its `Authorization` header: 401 for
 * a missing, malformed or unknown key (thrown, with `WWW-Authenticate` put on `answer`).
 * `authorize` checks the scope after the REST quota has counted the request.
 */
export function authenticate(authorization: string | undefined, answer: HeaderSink, keys: ApiKeys, route: ServiceRoute): Caller {
  const parsed = keys.parse(authorization, route.surface !== "rest");
  if ("problem" in parsed) {
    answer.header("www-authenticate", 'Bearer realm="minipod"');
    throw unauthorized(`${parsed.problem}; ${keys.open ? OPEN_KEYS : CONFIGURED_KEYS}`);
  }
  const entry = keys.lookup(parsed.key);
  if (!entry) {
    answer.header("www-authenticate", 'Bearer realm="minipod", error="invalid_token"');
    throw unauthorized(`invalid API key: ${CONFIGURED_KEYS}`);
  }
  return { key: parsed.key, scopes: entry.scopes, rateLimitExempt: entry.rateLimitExempt, route };
}

/** 403 when the key's scopes do not cover the route (`"scopes": []` covers nothing). */
export function authorize(method: string, path: string, { scopes, route }: Caller): void {
  if (!scopes.has(route.scope)) {
    throw new EmulatorError("FORBIDDEN", `access denied: this API key lacks the scope "${route.scope}" needed for ${method} ${path}`);
  }
}
