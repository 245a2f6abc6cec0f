import { request as httpRequest, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JSON_DEPTH_MAX, RUN_PAYLOAD_MAX_BYTES, RUNSYNC_PAYLOAD_MAX_BYTES } from "../../src/domain/limits.js";
import { createEmulator, type Emulator } from "../../src/index.js";
import { API_KEY } from "../support/in-process.js";

/** A valid submission of exactly `bytes` bytes of JSON. */
function submissionOf(bytes: number): string {
  const shell = '{"input":{"blob":""}}';
  return `{"input":{"blob":"${"x".repeat(bytes - shell.length)}"}}`;
}

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  body: any;
  /** Body bytes the client had written when the answer arrived. */
  sentBeforeAnswer: number;
}

const CHUNK = Buffer.alloc(64 * 1024, "x");

/**
 * POSTs with node's http client. `declared` sends a Content-Length and no body at all; otherwise
 * the body is streamed in chunks (chunked encoding, no Content-Length): first the opening of a
 * JSON object, then filler, and the request is never ended, so only a server that refuses while
 * reading can answer.
 */
function post(url: string, path: string, o: { declared: number } | { stream: number }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
    if ("declared" in o) headers["content-length"] = o.declared;
    const req = httpRequest(`${url}${path}`, { method: "POST", headers });
    let sent = 0;
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text), sentBeforeAnswer });
      });
    });
    req.on("error", (e) => {
      if (!answered) reject(e);
    });
    if ("declared" in o) {
      req.flushHeaders();
      return;
    }
    const pump = () => {
      while (!answered && sent < o.stream) {
        const piece = sent === 0 ? Buffer.from('{"input":{"blob":"') : CHUNK;
        sent += piece.length;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
    };
    pump();
  });
}

describe("payload limits over a real socket", () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await createEmulator({ port: 0, clock: "manual", config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 1, workersMax: 1 }] } });
  });
  afterAll(() => emulator.close());

  const cases = [
    { op: "run", limit: RUN_PAYLOAD_MAX_BYTES, mb: 10 },
    { op: "runsync", limit: RUNSYNC_PAYLOAD_MAX_BYTES, mb: 20 },
  ];

  for (const { op, limit, mb } of cases) {
    it(`refuses a /${op} body declared over ${mb} MB with 413 before reading it`, async () => {
      const res = await post(emulator.url, `/v2/echo/${op}`, { declared: limit + 1 });
      expect(res.status).toBe(413);
      expect(res.headers["content-type"]).toBe("application/problem+json");
      expect(res.body).toEqual({ title: "Payload Too Large", status: 413, detail: expect.stringContaining(`${limit} bytes (${mb} MB)`) });
      expect(res.sentBeforeAnswer).toBe(0);
    });

    it(`refuses a streamed /${op} body without Content-Length once it passes ${mb} MB, while reading`, async () => {
      const res = await post(emulator.url, `/v2/echo/${op}`, { stream: limit * 3 });
      expect(res.status).toBe(413);
      expect(res.headers["content-type"]).toBe("application/problem+json");
      expect(res.headers["transfer-encoding"] ?? "").not.toBe("chunked"); // a whole problem body
      expect(res.body).toMatchObject({ title: "Payload Too Large", status: 413 });
      // Answered long before the client would have finished (it never ends the request at all).
      expect(res.sentBeforeAnswer).toBeGreaterThan(limit);
      expect(res.sentBeforeAnswer).toBeLessThan(limit * 3);
    });
  }

  it("accepts a body of exactly the limit", async () => {
    const body = submissionOf(RUN_PAYLOAD_MAX_BYTES);
    expect(Buffer.byteLength(body)).toBe(RUN_PAYLOAD_MAX_BYTES);
    const res = await fetch(`${emulator.url}/v2/echo/run`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }, body });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "IN_QUEUE" });
    // The same bytes are over the limit for nothing smaller: /runsync takes twice as much.
    const sync = await fetch(`${emulator.url}/v2/echo/runsync`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: submissionOf(RUN_PAYLOAD_MAX_BYTES + 1),
    });
    expect(sync.status).toBe(200);
    const over = await fetch(`${emulator.url}/v2/echo/run`, {
      method: "POST",
      headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
      body: submissionOf(RUN_PAYLOAD_MAX_BYTES + 1),
    });
    expect(over.status).toBe(413);
  });

  /** A submission whose body nests `levels` levels of objects, or of arrays within `input`, the body itself counted. */
  const nestedSubmission = (levels: number, inObject: boolean) => {
    let inner = inObject ? "{}" : "[]";
    for (let i = inObject ? 2 : 3; i < levels; i++) inner = inObject ? `{"a":${inner}}` : `[${inner}]`;
    return `{"input":${inObject ? inner : `{"deep":${inner}}`}}`;
  };
  const send = (op: string, body: string) => fetch(`${emulator.url}/v2/echo/${op}`, { method: "POST", headers: { authorization: `Bearer ${API_KEY}` }, body });
  const health = async () => {
    const res = await fetch(`${emulator.url}/v2/echo/health`, { headers: { authorization: `Bearer ${API_KEY}` } });
    return ((await res.json()) as { jobs: Record<string, number> }).jobs;
  };

  it(`refuses bodies nested more than ${JSON_DEPTH_MAX} levels deep with 400, and runs one nested exactly so`, async () => {
    const before = await health();
    for (const op of ["run", "runsync"]) {
      for (const levels of [JSON_DEPTH_MAX + 1, 5_000, 100_000]) {
        for (const inObject of [false, true]) {
          const res = await send(op, nestedSubmission(levels, inObject));
          expect(res.status, `${op} ${levels} ${inObject}`).toBe(400);
          expect(await res.json()).toMatchObject({ status: 400, detail: expect.stringContaining(`more than ${JSON_DEPTH_MAX} levels deep`) });
        }
      }
    }
    expect(await health()).toEqual(before);
    // The journal keeps refused requests too, but not bodies too deep to store.
    const journaled = emulator.requests({ status: 400 }).requests.map((r) => r.body);
    expect(journaled.filter((b) => b === `[nested more than ${JSON_DEPTH_MAX} levels, not kept]`)).toHaveLength(8);

    const body = nestedSubmission(JSON_DEPTH_MAX, true);
    const ok = await send("run", body);
    expect(ok.status).toBe(200);
    const { id } = (await ok.json()) as { id: string };
    await emulator.runUntilIdle();
    const status = await fetch(`${emulator.url}/v2/echo/status/${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const view = (await status.json()) as { status: string; output: unknown };
    expect(view.status).toBe("COMPLETED");
    expect(view.output).toEqual((JSON.parse(body) as { input: unknown }).input);
  });
});
