import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { connect } from "node:net";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

const CONTROL_KEY = "control-secret";
let emu: Emulator;
let port: number;

beforeAll(async () => {
  emu = await createEmulator({
    port: 0,
    config: { controlKey: CONTROL_KEY, endpoints: [{ id: "llm", handler: "openai", workersMin: 1, openai: { tokenDelayMs: 0 } }, { id: "q", handler: "echo" }] },
  });
  port = Number(new URL(emu.url).port);
});
afterAll(() => emu?.close());

/** One GET over a raw socket (the bytes as written: no client re-encodes the path). */
async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const head = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Authorization: Bearer k", "Connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  return parseAnswer(await rawExchange(port, head));
}

const BAD = ["%C0%AE", "%E0%A4%A", "%ZZ", "%", "%F0%9F%98", "%ED%A0%80", "%C0"];
const PLACES = [
  (s: string) => `/v2/llm/openai/v1/models/${s}`,
  (s: string) => `/v2/q/status/${s}`,
  (s: string) => `/v2/q/stream/${s}`,
  (s: string) => `/v2/q/status/abc?ttl=${s}`,
  (s: string) => `/v2/${s}/health`,
  (s: string) => `/v1/endpoints/${s}`,
  (s: string) => `/v2/endpoints/${s}`,
  (s: string) => `/v2/pods/${s}`,
  (s: string) => `/v2/q/job-take/${s}`,
  (s: string) => `/v2/q/ping/${s}?job_id=${s}`,
  (s: string) => `/_emulator/jobs/${s}`,
  (s: string) => `/${s}`,
  (s: string) => `/docs/${s}`,
  (s: string) => `/v2/q/requests?cursor=${s}`,
];

describe("malformed percent-encodings never answer 5xx", () => {
  it("in paths and queries of every surface", async () => {
    for (const bad of BAD) {
      for (const place of PLACES) {
        const path = place(bad);
        const { status, body } = await get(path, { "X-Minipod-Control-Key": CONTROL_KEY });
        expect(status, `${path}: ${body}`).toBeLessThan(500);
      }
    }
  });

  it("a model id with a malformed encoding is a model that does not exist (404)", async () => {
    const { status, body } = await get("/v2/llm/openai/v1/models/%C0%AE");
    expect(status).toBe(404);
    expect(JSON.parse(body).error.message).toMatch(/does not exist/);
  });

  it("in the dashboard's control-key cookie: 401, as any wrong key", async () => {
    for (const value of ["%E0%A4%A", "%C0", "%", '"abc', "%ZZ%ZZ"]) {
      const { status, body } = await get("/_emulator/jobs", { Cookie: `minipod_control_key_${port}=${value}` });
      expect(status, body).toBe(401);
      expect(JSON.parse(body).detail).toMatch(/control key is wrong/);
    }
  });

  it("property: any mix of encodings in path segments, queries and cookies", async () => {
    const piece = fc.oneof(fc.constantFrom(...BAD), fc.stringMatching(/^[a-z0-9._~-]{0,6}$/), fc.constantFrom("%2F", "%00", "%25", "..", "."));
    await fc.assert(
      // A job-take with a valid worker id is held, and a raw exchange half-closes at once: the
      // server then drops the poll unanswered, as it should for a client gone.
      fc.asyncProperty(fc.constantFrom(...PLACES.filter((p) => !p("x").includes("job-take"))), fc.array(piece, { minLength: 1, maxLength: 3 }), piece, async (place, parts, cookie) => {
        const { status, body } = await get(place(parts.join("")), { Cookie: `minipod_control_key_${port}=${cookie}; other=${cookie}` });
        expect(status, body).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });

  it("in headers: bytes that are not UTF-8 and percent junk in every header minipod reads", async () => {
    /** The head as latin1 bytes: 0x80..0xff reach the server as sent (obs-text, which HTTP allows in a value). */
    const send = (head: string, body: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => socket.end(Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(body)])));
        let text = "";
        socket.on("data", (d: Buffer) => (text += d.toString("latin1")));
        socket.on("end", () => resolve(text));
        socket.on("error", (e) => (text ? resolve(text) : reject(e)));
      });
    const values = ["%ZZ", "%C0%AE", "\xff\xfe", "\x80abc", "Bearer \xff\xc0", "Bearer %E0%A4%A", "\"", "=?utf-8?q?x?=", "application/json; charset=\xff", "application/json; charset=utf-16"];
    const headers = ["Authorization", "X-Minipod-Control-Key", "Cookie", "Content-Type", "Origin", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Last-Event-ID", "Accept", "Content-Encoding"];
    const targets: Array<[string, string]> = [
      ["POST", "/v2/q/run"],
      ["POST", "/v2/llm/openai/v1/chat/completions"],
      ["GET", "/v2/q/health"],
      ["GET", "/_emulator/jobs"],
      ["GET", "/_emulator/logs"],
      ["GET", "/v1/endpoints"],
      ["GET", "/dashboard"],
    ];
    for (const [method, path] of targets) {
      for (const name of headers) {
        for (const value of values) {
          const body = method === "POST" ? '{"input":{"a":1},"model":"m","messages":[{"role":"user","content":"x"}]}' : "";
          const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close", `${name}: ${value}`];
          if (name !== "Authorization") lines.push("Authorization: Bearer k");
          if (name !== "X-Minipod-Control-Key" && name !== "Cookie") lines.push(`X-Minipod-Control-Key: ${CONTROL_KEY}`);
          if (method === "POST") lines.push(`Content-Length: ${body.length}`);
          if (method === "POST" && name !== "Content-Type") lines.push("Content-Type: application/json");
          const { status, body: answer } = parseAnswer(await send([...lines, "", ""].join("\r\n"), body));
          expect(status, `${method} ${path} with ${name}: ${JSON.stringify(value)}: ${answer}`).toBeLessThan(500);
        }
      }
    }
  });
});
