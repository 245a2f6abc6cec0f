import { execFile } from "node:child_process";
import { connect, createServer, type Socket } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmulator, type Emulator } from "../../src/compose/emulator.js";
import { endGracefully } from "../../src/http/linger.js";

const MB = 1024 * 1024;
const run = promisify(execFile);

/**
 * A body refused by its size (413) while the client is still sending it: the answer says
 * `Connection: close`, and the connection lingers, reading and dropping the rest, so the client
 * reads the 413 and its problem rather than a reset.
 */
describe("a refused upload", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await createEmulator({ port: 0, host: "127.0.0.1", clock: "manual", config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "echo" }] } });
  });
  afterAll(() => emu.close());

  /** Head and a body of `size` spaces on a raw socket, all written at once; the answer as read until the server closes. */
  const raw = (path: string, size: number, extra = "Content-Length") =>
    new Promise<string>((resolve) => {
      const s = connect(emu.port, "127.0.0.1", () => {
        const head = extra === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`;
        s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n${head}\r\nConnection: close\r\n\r\n`);
        if (extra === "chunked") for (let i = 0; i < size; i += MB) s.write(`${MB.toString(16)}\r\n${" ".repeat(MB)}\r\n`);
        else s.write(Buffer.alloc(size, 0x20));
      });
      let got = "";
      s.on("data", (d: Buffer) => (got += d.toString()));
      s.on("error", (e: NodeJS.ErrnoException) => resolve(`${e.code} after ${JSON.stringify(got.slice(0, 40))}`));
      s.on("close", () => resolve(got));
    });

  const cases: Array<[string, number, string?]> = [
    ["/v1/endpoints", 5 * MB],
    ["/v2/api/run", 11 * MB],
    ["/v2/api/runsync", 21 * MB],
    ["/graphql", 5 * MB],
    ["/lb/api/x", 31 * MB],
    ["/v2/api/run", 12 * MB, "chunked"],
  ];
  for (const [path, size, how] of cases) {
    it(`answers 413 with its problem to a client still sending: POST ${path}, ${size / MB} MB${how ? `, ${how}` : ""}`, async () => {
      for (let i = 0; i < 3; i++) {
        const got = await raw(path, size, how);
        expect(got).toMatch(/^HTTP\/1\.1 413 /);
        expect(got).toMatch(/\r\nconnection: close\r\n/i);
        expect(got).toMatch(/"status":\s*413|payload too large/i);
      }
    });
  }

  it("answers 431 to a head too large, and a body behind it does not reset the answer", async () => {
    for (let i = 0; i < 3; i++) {
      const got = await new Promise<string>((resolve) => {
        const s = connect(emu.port, "127.0.0.1", () => {
          s.write(`POST /v2/api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\nContent-Length: ${5 * MB}\r\n\r\n`);
          s.write(Buffer.alloc(5 * MB, 0x20));
        });
        let text = "";
        s.on("data", (d: Buffer) => (text += d.toString()));
        s.on("error", (e: NodeJS.ErrnoException) => resolve(`${e.code} after ${JSON.stringify(text.slice(0, 40))}`));
        s.on("close", () => resolve(text));
      });
      expect(got).toMatch(/^HTTP\/1\.1 431 /);
    }
  });

  it("node's fetch reads the 413 of a 5 MB body to /v1/endpoints", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${emu.url}/v1/endpoints`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ name: "n".repeat(5 * MB) }) });
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(((await res.json()) as { status: number }).status).toBe(413);
    }
  });

  it("Python's urllib (which sends Connection: close) and requests read the 413 and its problem", async () => {
    const py = `
import json, sys, urllib.request, urllib.error
for path, size in ((sys.argv[1] + "/v1/endpoints", 5 << 20), (sys.argv[1] + "/v2/api/run", 11 << 20)):
    try:
        urllib.request.urlopen(urllib.request.Request(path, data=b" " * size, headers={"authorization": "Bearer k", "content-type": "application/json"}))
        print("no error")
    except urllib.error.HTTPError as e:
        print(e.code, json.loads(e.read())["status"])
try:
    import requests
except ImportError:
    print("413 413")
else:
    r = requests.post(sys.argv[1] + "/graphql", data=b" " * (5 << 20), headers={"authorization": "Bearer k", "content-type": "application/json"})
    print(r.status_code, r.json()["status"] if r.headers["content-type"].startswith("application/problem+json") else r.json().get("errors") and 413)
`;
    const { stdout } = await run("/usr/bin/python3", ["-c", py, emu.url], { timeout: 30_000 });
    expect(stdout.trim().split("\n")).toEqual(["413 413", "413 413", "413 413"]);
  });
});

describe("an early answer to a large upload on a kept connection", () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await createEmulator({
      port: 0,
      host: "127.0.0.1",
      clock: "manual",
      config: { endpoints: [{ id: "api", type: "LOAD_BALANCER", handler: "echo" }, { id: "q", handler: "echo" }] },
    });
  });
  afterAll(() => emu.close());

  /**
   * A keep-alive request announcing a body of `size` bytes (or chunked), its body sent by 1 MB until
   * the server closes or `max` bytes have gone: the answer, and whether the server closed first.
   */
  const upload = (path: string, headers: string, size: number | "chunked", max = 48 * MB) =>
    new Promise<{ answer: string; closed: boolean }>((resolve) => {
      let answer = "";
      let sent = 0;
      let done = false;
      const finish = (closed: boolean) => {
        if (done) return;
        done = true;
        s.destroy();
        resolve({ answer, closed });
      };
      const s = connect(emu.port, "127.0.0.1", () => {
        const length = size === "chunked" ? "Transfer-Encoding: chunked" : `Content-Length: ${size}`;
        s.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Type: application/json\r\n${length}\r\n\r\n`);
        const pump = () => {
          while (!done && sent < max) {
            sent += MB;
            const ok = size === "chunked" ? s.write(`${MB.toString(16)}\r\n${" ".repeat(MB)}\r\n`) : s.write(Buffer.alloc(MB, 0x20));
            if (!ok) return void s.once("drain", pump);
          }
          // Everything was sent and the server still reads: it would read the body whole.
          if (!done) finish(false);
        };
        pump();
      });
      s.on("data", (d: Buffer) => (answer += d.toString()));
      s.on("error", () => finish(true));
      s.on("close", () => finish(true));
    });

  const cases: Array<[string, string, string, number | "chunked"]> = [
    ["401 (no key), 100 MB", "/v2/q/run", "", 100 * MB],
    ["404 (no such route), 100 MB", "/no/such/route", "Authorization: Bearer k\r\n", 100 * MB],
    ["401 (no key), chunked", "/v2/q/run", "", "chunked"],
    ["401 through Hono, 100 MB", "/v1/endpoints", "", 100 * MB],
  ];
  for (const [what, path, headers, size] of cases) {
    it(`ends the connection and reads at most what a refused upload lingers for: ${what}, POST ${path}`, async () => {
      const { answer, closed } = await upload(path, headers, size);
      expect(answer).toMatch(/^HTTP\/1\.1 4(?!13)\d\d /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(closed).toBe(true);
    });
  }
});

describe("endGracefully", () => {
  it("closes once the client has sent more than its bytes, whatever the time", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const accepted = new Promise<Socket>((r) => server.once("connection", r));
    const client = connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    client.on("error", () => {});
    const side = await accepted;
    side.write("answer");
    endGracefully(side, { bytes: 64 * 1024, ms: 60_000 });
    let got = "";
    client.on("data", (d: Buffer) => (got += d.toString()));
    const closed = new Promise<void>((r) => side.once("close", () => r()));
    const chunk = Buffer.alloc(16 * 1024);
    const pump = setInterval(() => client.write(chunk), 1);
    await closed;
    clearInterval(pump);
    client.destroy();
    server.close();
    expect(side.bytesRead).toBeGreaterThan(64 * 1024);
    expect(got).toBe("answer");
  });
});
