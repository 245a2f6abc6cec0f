import { buildEmulator, type EmulatorOptions } from "../../src/compose/emulator.js";
import { REST_V2_COLLECTIONS } from "../../src/services/index.js";

const REST_V2 = new Set<string>(REST_V2_COLLECTIONS);
import { contract, DESCRIPTION_FILE, isRestV2 } from "../contract/v2-contract.js";

export const API_KEY = "test-key";

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** The service's v2 description, checked against every v2 REST answer an in-process test gets. */
let v2: ReturnType<typeof contract> | undefined;

/**
 * Fails the test at once when a v2 REST answer drifts from the service's published description
 * (status, media type, body schema, declared headers): every HTTP test is a conformance test too.
 */
export function checkV2Answer(method: string, path: string, status: number, headers: Headers, text: string): void {
  const pathname = path.split("?")[0]!;
  // Where the shared folder is absent, nothing to check against (test/contract/v2-conformance.test.ts says so).
  if (!DESCRIPTION_FILE || !isRestV2(pathname, REST_V2)) return;
  v2 ??= contract();
  const { problems } = v2.check({ method: method.toUpperCase(), path: pathname, status, headers, body: text });
  if (problems.length) throw new Error(`the answer does not match the service's REST v2 description:\n  ${problems.join("\n  ")}`);
}

/**
 * An emulator built in-process (no socket), on the manual clock unless told otherwise, with a
 * small request helper that sends the API key and parses JSON answers.
 */
export async function inProcess(options: EmulatorOptions = {}, internal: Parameters<typeof buildEmulator>[1] = {}) {
  const { core, app } = await buildEmulator({ clock: "manual", ...options }, internal);
  const request = async <T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> => {
    const init: RequestInit = { method, headers: { authorization: `Bearer ${API_KEY}`, ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const res = await app.request(`http://minipod.test${path}`, init);
    const text = await res.text();
    checkV2Answer(method, path, res.status, res.headers, text);
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
  /** A GET whose answer is read as it streams (Server-Sent Events); its status and headers are checked as any answer's. */
  const stream = async (path: string, headers: Record<string, string> = {}): Promise<Response> => {
    const res = await app.request(`http://minipod.test${path}`, { headers: { authorization: `Bearer ${API_KEY}`, ...headers } });
    if (res.headers.get("content-type")?.startsWith("text/event-stream")) checkV2Answer("GET", path, res.status, res.headers, "");
    else checkV2Answer("GET", path, res.status, res.headers, await res.clone().text());
    return res;
  };
  return {
    core,
    app,
    request,
    stream,
    get: <T = any>(path: string, headers?: Record<string, string>) => request<T>("GET", path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => request<T>("POST", path, body ?? {}, headers),
    advance: (ms: number) => core.clock.advance(ms),
    now: () => core.clock.now(),
    close: () => core.close(),
  };
}

export type InProcess = Awaited<ReturnType<typeof inProcess>>;
