import { buildEmulator, type EmulatorOptions } from "../../src/emulator.js";

export const API_KEY = "test-key";

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/**
 * An emulator built in-process (no socket), on the manual clock unless told otherwise, with a
 * small request helper that sends the API key and parses JSON answers.
 */
export async function inProcess(options: EmulatorOptions = {}) {
  const { core, app } = await buildEmulator({ clock: "manual", ...options });
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
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  };
  return {
    core,
    app,
    request,
    get: <T = any>(path: string, headers?: Record<string, string>) => request<T>("GET", path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => request<T>("POST", path, body ?? {}, headers),
    advance: (ms: number) => core.clock.advance(ms),
    now: () => core.clock.now(),
    close: () => core.close(),
  };
}

export type InProcess = Awaited<ReturnType<typeof inProcess>>;
