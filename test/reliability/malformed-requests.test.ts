import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/index.js";
import { connect } from "node:net";
import { parseAnswer, rawExchange } from "../support/raw-http.js";

/**
 * Requests node cannot read as HTTP/1.1 (a raw byte in the request line or a header, a head over
 * 16 KiB) and requests whose target is no path (`*`, a backslash in the path) get a problem+json
 * naming what is wrong, never an empty 400, and minipod goes on serving. Over raw sockets: no
 * client would send these bytes.
 */
let emu: Emulator;
beforeAll(async () => {
  emu = await createEmulator({ clock: "manual", config: { endpoints: [{ id: "echo", handler: "echo", workersMin: 0, workersMax: 0 }] } });
});
afterAll(() => emu?.close());

async function exchange(head: string, body = "") {
  return parseAnswer(await rawExchange(emu.port, head, body, false));
}

const problem = (answer: { status: number; headers: Record<string, string>; body: string }) => {
  expect(answer.headers["content-type"]).toBe("application/problem+json");
  const parsed = JSON.parse(answer.body) as { title: string; status: number; detail: string };
  expect(parsed.status).toBe(answer.status);
  return parsed;
};

describe("a request node cannot read", () => {
  it.each([
    ["a raw byte in the path", "POST /v2/echo/run\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nContent-Length: 2\r\n\r\n{}", /not valid HTTP\/1\.1 \(HPE_INVALID_URL/],
    ["a raw byte in a header's value", "GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Bad: a\x01b\r\n\r\n", /not valid HTTP\/1\.1 \(HPE_INVALID_HEADER_TOKEN/],
    ["a header without a name", "GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\n: nameless\r\n\r\n", /not valid HTTP\/1\.1 \(HPE_INVALID_HEADER_TOKEN/],
    ["a method that is none", "G\x01T /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", /not valid HTTP\/1\.1 \(HPE_INVALID_METHOD/],
    ["a version that is none", "GET /v2/echo/health HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", /not valid HTTP\/1\.1 \(HPE_INVALID_VERSION/],
    ["a bad chunk size", "POST /v2/echo/run HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", /not valid HTTP\/1\.1 \(HPE_INVALID_CHUNK_SIZE/],
  ])("%s: 400 with a problem naming it", async (_what, head, says) => {
    const answer = await exchange(head);
    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe("close");
    expect(problem(answer).detail).toMatch(says);
    expect((await fetch(`${emu.url}/v2/echo/health`, { headers: { authorization: "k" } })).status).toBe(200);
  });

  it("after a good request on the same connection: its answer, then the problem", async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(emu.port, "127.0.0.1", () => socket.write("GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\n\r\n"));
      let got = "";
      socket.on("data", (d: Buffer) => {
        // The first answer read, the next request is a bad one.
        if (!got) socket.write("GET /v2/echo/health\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        got += d.toString("latin1");
      });
      socket.on("close", () => resolve(got));
      socket.on("error", reject);
      socket.setTimeout(5000, () => socket.destroy(new Error("no answer within 5 s")));
    });
    expect([...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1])).toEqual(["200", "400"]);
    expect(text).toContain('"detail":"the request is not valid HTTP/1.1 (HPE_INVALID_URL');
  });

  it("a head over 16 KiB: 431 with a problem", async () => {
    const answer = await exchange(`GET /v2/echo/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ${"a".repeat(20 * 1024)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(problem(answer).detail).toMatch(/over 16 KiB/);
  });
});

describe("a request whose target is no path", () => {
  it.each([
    ["GET *", "GET * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", /the request target is not a path/],
    ["OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", /the request target is not a path/],
    ["a backslash in a path", "GET /v2/echo\\health HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: k\r\nConnection: close\r\n\r\n", /backslash: percent-encode it as %5C/],
  ])("%s: 400 with a problem naming it", async (_what, head, says) => {
    const answer = await exchange(head);
    expect(answer.status).toBe(400);
    expect(problem(answer).detail).toMatch(says);
  });
});

describe("a CONNECT (a proxy's tunnel)", () => {
  it("is refused with 405 and a problem, not a dropped connection", async () => {
    const answer = await exchange("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n");
    expect(answer.status).toBe(405);
    expect(problem(answer).detail).toMatch(/CONNECT 127\.0\.0\.1:22 asks for a tunnel: minipod is no proxy/);
  });
});
